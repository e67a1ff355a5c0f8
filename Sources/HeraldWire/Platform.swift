/// The push service a device is reached through: what a device registers with. The outbox's
/// other destinations are ``JobDestination``'s.
public enum Platform: String, Codable, Sendable, CaseIterable {
    /// Apple Push Notification service.
    case ios
    /// Firebase Cloud Messaging.
    case android
    /// Web Push (RFC 8030/8291/8292): UnifiedPush distributors on phones without Google's
    /// services, and browsers. The device's "token" is its subscription
    /// (``WebPushSubscription/storageToken``), and it is reached only through a registered alias.
    case webpush
}
