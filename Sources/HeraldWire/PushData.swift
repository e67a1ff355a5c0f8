/// The data keys every Herald push carries, as the Breez notification plugin expects them:
/// `{"notification_type": "swap_updated", "notification_payload": "{\"id\":…}", "app_data": "…"}`.
///
/// On APNs these keys sit beside `aps`; on FCM they are the `data` map (every value a string).
public struct PushData: Codable, Hashable, Sendable {
    public var notificationType: NotificationType
    /// The event's `data` object, serialised as a JSON string.
    public var notificationPayload: String
    public var appData: String?

    public init(notificationType: NotificationType, notificationPayload: String, appData: String? = nil) {
        self.notificationType = notificationType
        self.notificationPayload = notificationPayload
        self.appData = appData
    }

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case notificationPayload = "notification_payload"
        case appData = "app_data"
    }

    /// The keys as a flat string map, the form both providers put on the wire.
    public var dataMap: [String: String] {
        var map = [
            CodingKeys.notificationType.rawValue: notificationType.rawValue,
            CodingKeys.notificationPayload.rawValue: notificationPayload,
        ]
        if let appData { map[CodingKeys.appData.rawValue] = appData }
        return map
    }

    /// Reads the keys back from a push's data map (an APNs `userInfo` or an FCM `data` map).
    public init?(dataMap: [String: String]) {
        guard let type = dataMap[CodingKeys.notificationType.rawValue] else { return nil }
        self.notificationType = NotificationType(rawValue: type)
        self.notificationPayload = dataMap[CodingKeys.notificationPayload.rawValue] ?? "{}"
        self.appData = dataMap[CodingKeys.appData.rawValue]
    }
}
