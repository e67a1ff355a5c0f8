import Foundation
import HeraldWire

/// The body of an FCM HTTP v1 send: `{"message": {…}}`.
public struct FCMSendRequest: Codable, Sendable, Hashable {
    public var message: FCMMessage
    public init(message: FCMMessage) { self.message = message }
}

/// One FCM v1 `Message` (the fields Herald uses).
public struct FCMMessage: Codable, Sendable, Hashable {
    /// `android.priority`. HIGH wakes a dozing device at once; NORMAL may wait for a
    /// maintenance window.
    public enum AndroidPriority: String, Codable, Sendable, Hashable {
        case high = "HIGH"
        case normal = "NORMAL"
    }

    public struct Notification: Codable, Sendable, Hashable {
        public var title: String?
        public var body: String?
        public var image: String?
        public init(title: String? = nil, body: String? = nil, image: String? = nil) {
            self.title = title
            self.body = body
            self.image = image
        }
    }

    /// The same options the message carries: one type, FCM's field names.
    public typealias AndroidNotification = PushMessage.AndroidNotification

    public struct AndroidConfig: Codable, Sendable, Hashable {
        public var priority: AndroidPriority
        /// Seconds with an `s` suffix (`"3600s"`), a protobuf Duration.
        public var ttl: String?
        public var collapseKey: String?
        public var notification: AndroidNotification?
        public init(
            priority: AndroidPriority,
            ttl: String? = nil,
            collapseKey: String? = nil,
            notification: AndroidNotification? = nil
        ) {
            self.priority = priority
            self.ttl = ttl
            self.collapseKey = collapseKey
            self.notification = notification
        }
        enum CodingKeys: String, CodingKey {
            case priority, ttl, notification
            case collapseKey = "collapse_key"
        }
    }

    /// What FCM forwards to APNs when the token belongs to an iOS app.
    public struct APNsConfig: Codable, Sendable, Hashable {
        public struct Payload: Codable, Sendable, Hashable {
            public var aps: APNsPayload.APS
            public init(aps: APNsPayload.APS) { self.aps = aps }
        }
        public var payload: Payload
        public init(payload: Payload) { self.payload = payload }
    }

    /// The registration token; absent only when measuring the payload.
    public var token: String?
    /// Every value a string: FCM rejects anything else.
    public var data: [String: String]?
    public var notification: Notification?
    public var android: AndroidConfig?
    public var apns: APNsConfig?

    public init(
        token: String?,
        data: [String: String]?,
        notification: Notification? = nil,
        android: AndroidConfig? = nil,
        apns: APNsConfig? = nil
    ) {
        self.token = token
        self.data = data
        self.notification = notification
        self.android = android
        self.apns = apns
    }

    /// The FCM message for a push.
    ///
    /// - `wake` and `background` are **data-only**: no `notification`, so Android always hands
    ///   the data to the app's `FirebaseMessagingService` (a notification message would be
    ///   shown by the system and skip the service while the app is in the background).
    ///   `wake` is HIGH priority, `background` NORMAL.
    /// - `alert` adds `notification` (title, body, image) and `android.notification`
    ///   (channel, sound, colour, icon), HIGH priority.
    /// - `apns.payload.aps` carries sound, badge and `mutable-content: 1` when a sound or
    ///   badge is set (a wallet backend's shape, for iOS apps that use FCM).
    /// - `expiresAt` becomes `android.ttl`, `collapseID` `android.collapse_key`.
    public init(_ message: PushMessage, token: String?, now: Date) {
        let isAlert = message.kind == .alert
        var ttl: String?
        if let expiresAt = message.expiresAt {
            ttl = "\(max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down))))s"
        }
        let androidNotification = message.android
        self.init(
            token: token,
            data: message.data.isEmpty ? nil : message.data,
            notification: isAlert
                ? message.alert.map { Notification(title: $0.title, body: $0.body, image: $0.image) } : nil,
            android: AndroidConfig(
                priority: message.kind == .background ? .normal : .high,
                ttl: ttl,
                collapseKey: message.collapseID,
                notification: isAlert ? androidNotification : nil
            ),
            apns: message.sound != nil || message.badge != nil
                ? APNsConfig(
                    payload: .init(aps: .init(sound: message.sound, badge: message.badge, mutableContent: 1))
                ) : nil
        )
    }
}

/// Renders and checks FCM request bodies.
public enum FCMPayload {
    /// FCM's limit for a message's payload, in bytes.
    public static let maximumSize = 4096

    /// Keys FCM reserves in `data` and refuses with `INVALID_ARGUMENT`.
    static let reservedDataKeys: Set<String> = ["from", "notification", "message_type"]

    /// The request body for sending a message to `token`, in Herald's deterministic JSON.
    public static func render(_ message: PushMessage, token: String, now: Date) throws -> Data {
        if let verbatim = message.verbatim { return Data(verbatim.body.utf8) }
        return try WireJSON.encode(FCMSendRequest(message: FCMMessage(message, token: token, now: now)))
    }

    /// What an Android `FirebaseMessagingService` receives as `RemoteMessage.data`: the flat
    /// string map, as JSON.
    public static func renderData(_ message: PushMessage) throws -> Data {
        if let verbatim = message.verbatim { return verbatim.received }
        return try WireJSON.encode(message.data)
    }

    /// Refuses a message FCM would refuse: a reserved data key, or a rendered message (without
    /// the token) over 4096 bytes.
    public static func validate(_ message: PushMessage, now: Date) throws(PushValidationError) {
        if let verbatim = message.verbatim {
            guard verbatim.apnsHeaders == nil else { throw PushValidationError(.invalidMessage, message: "the verbatim push has no FCM form") }
            try PayloadChecks.checkSize(of: "the FCM message", limit: maximumSize + PushTarget.maximumTokenBytes, service: "FCM") {
                Data(verbatim.body.utf8)
            }
            return
        }
        for key in message.data.keys
        where reservedDataKeys.contains(key) || key.hasPrefix("google.") || key.hasPrefix("gcm.") {
            throw PushValidationError(.invalidMessage, message: "FCM reserves the data key \"\(key)\"")
        }
        try PayloadChecks.checkSize(of: "the FCM message", limit: maximumSize, service: "FCM") {
            try WireJSON.encode(FCMMessage(message, token: nil, now: now))
        }
    }
}
