/// The push service a device is reached through.
public enum Platform: String, Codable, Sendable, CaseIterable {
    /// Apple Push Notification service.
    case ios
    /// Firebase Cloud Messaging.
    case android
}
