import Foundation

/// Timestamps as LSPS0 and JavaScript's `toISOString()` write them (LSPS5 notifications, Bitkit's
/// legacy registrations and envelopes): one writer and one reader for every protocol that uses them.
public enum ISOTimestamp {
    /// RFC 3339 in UTC with milliseconds, `2023-05-04T10:14:23.853Z`.
    public static func text(_ date: Date) -> String {
        // Whole milliseconds first: the format style truncates a binary fraction such as .853
        // (held as .85299…) to .852.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millis) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let text = Date(timeIntervalSince1970: TimeInterval(wholeSeconds)).formatted(Date.ISO8601FormatStyle())
        let digits = String(millis)
        return "\(text.dropLast()).\(String(repeating: "0", count: 3 - digits.count))\(digits)Z"
    }

    /// Reads an RFC 3339 timestamp, with or without fractional seconds; nil if it is not one.
    public static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            return date
        }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
