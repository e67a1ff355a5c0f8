/// What the plugin did with one push: the content to show and how it got there.
public struct HandlingResult: Sendable, Codable {
    public enum Disposition: String, Sendable, Codable {
        /// The task ran as intended.
        case handled
        /// Something failed; the content is the type's fallback.
        case fellBack = "fell_back"
        /// The main app is running and handles the push itself.
        case yieldedToApp = "yielded_to_app"
    }

    /// The routing name (`lnurlpay_info`, `DEPOSIT_RECEIVED`, `incomingHtlc`, …).
    public var notificationType: String
    public var content: NotificationContent
    public var disposition: Disposition
    /// Why it fell back, for logs and the closing JSON.
    public var reason: String?
    public var timedOut: Bool
    /// Every reply POSTed (or tried) before the content was handed over.
    public var replies: [ReplyReport]
    public var elapsedMilliseconds: Int

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case content, disposition, reason
        case timedOut = "timed_out"
        case replies
        case elapsedMilliseconds = "elapsed_ms"
    }
}
