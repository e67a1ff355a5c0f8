import Foundation

/// Reads an HTTP `Retry-After` header (RFC 9110 §10.2.3): either a number of seconds or an
/// HTTP date. APNs and FCM both send the seconds form; the date form is accepted for proxies.
enum RetryAfter {
    /// The wait the header asks for, or nil when it is absent or unreadable. A date in the past
    /// means "now", so it gives zero rather than nil.
    static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = httpDate(value) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }

    private static func httpDate(_ value: String) -> Date? {
        // IMF-fixdate, the only form a current server sends: "Sun, 06 Nov 1994 08:49:37 GMT".
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }
}
