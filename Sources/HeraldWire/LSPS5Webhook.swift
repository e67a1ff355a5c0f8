import Foundation

/// What an LSPS5 (bLIP-55) webhook call carries besides its body: two headers, and the text the
/// LSP signs with its node key.
public enum LSPS5Webhook {
    /// When the LSP made the notification, as ``timestampText(_:)`` writes it.
    public static let timestampHeader = "x-lsps5-timestamp"
    /// The LSP's Lightning message signature (zbase32) over ``signedMessage(timestamp:body:)``.
    public static let signatureHeader = "x-lsps5-signature"

    /// The bytes the LSP signs: the fixed prefix, the timestamp header exactly as sent, and the
    /// body exactly as sent.
    public static func signedMessage(timestamp: String, body: some Sequence<UInt8>) -> [UInt8] {
        var message = Array("LSPS5: DO NOT SIGN THIS MESSAGE MANUALLY: LSP: At ".utf8)
        message.append(contentsOf: timestamp.utf8)
        message.append(contentsOf: " I notify ".utf8)
        message.append(contentsOf: body)
        return message
    }

    /// A timestamp as LSPS0 writes one: RFC 3339 in UTC with milliseconds,
    /// `2023-05-04T10:14:23.853Z`.
    public static func timestampText(_ date: Date) -> String {
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
    public static func parseTimestamp(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            return date
        }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
