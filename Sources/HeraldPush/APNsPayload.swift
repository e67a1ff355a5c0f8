import Foundation
import HeraldWire

/// The JSON body of an APNs request: `aps` with the data keys beside it.
///
/// This is exactly what an iOS app or Notification Service Extension receives as `userInfo`, so
/// the local development provider renders it too.
public struct APNsPayload: Codable, Sendable, Hashable {
    /// Apple's `aps` dictionary.
    public struct APS: Codable, Sendable, Hashable {
        /// `{title, body}`: APNs has no `image`, so none is ever set.
        public var alert: NotificationText?
        public var sound: String?
        public var badge: Int?
        public var category: String?
        public var interruptionLevel: String?
        /// 1 lets the Notification Service Extension run and rewrite the alert.
        public var mutableContent: Int?
        /// 1 marks a background push.
        public var contentAvailable: Int?

        public init(
            alert: NotificationText? = nil,
            sound: String? = nil,
            badge: Int? = nil,
            category: String? = nil,
            interruptionLevel: String? = nil,
            mutableContent: Int? = nil,
            contentAvailable: Int? = nil
        ) {
            self.alert = alert
            self.sound = sound
            self.badge = badge
            self.category = category
            self.interruptionLevel = interruptionLevel
            self.mutableContent = mutableContent
            self.contentAvailable = contentAvailable
        }

        enum CodingKeys: String, CodingKey {
            case alert, sound, badge, category
            case interruptionLevel = "interruption-level"
            case mutableContent = "mutable-content"
            case contentAvailable = "content-available"
        }
    }

    /// The largest body APNs accepts for a regular push, in bytes.
    public static let maximumSize = 4096
    /// The longest `apns-collapse-id` APNs accepts, in bytes.
    public static let maximumCollapseIDSize = 64

    public var aps: APS
    /// The app's keys, beside `aps` (Herald's: `notification_type`, `notification_payload`, `app_data`).
    public var data: [String: String]

    public init(aps: APS, data: [String: String]) {
        self.aps = aps
        self.data = data
    }

    /// The payload for a message.
    ///
    /// - `wake`: alert (the generic one if none is given) and `mutable-content: 1`, so the
    ///   extension runs; plus sound, badge, category, interruption level when set.
    /// - `alert`: the same shape. `mutable-content: 1` is kept because wallet backends set it
    ///   on every push and an extension that does not rewrite simply passes it on.
    /// - `background`: `content-available: 1` only; anything visible would make it an alert.
    public init(_ message: PushMessage) {
        switch message.kind {
        case .background:
            aps = APS(contentAvailable: 1)
        case .wake, .alert:
            let alert = message.alert ?? PushMessage.genericWakeAlert
            aps = APS(
                alert: NotificationText(title: alert.title, body: alert.body),
                sound: message.sound,
                badge: message.badge,
                category: message.category,
                interruptionLevel: message.interruptionLevel,
                mutableContent: 1
            )
        }
        data = message.data
    }

    /// The request body for a message, in Herald's deterministic JSON (sorted keys, slashes
    /// unescaped), so the same message is always the same bytes.
    public static func render(_ message: PushMessage) throws -> Data {
        if let verbatim = message.verbatim { return verbatim.received }
        return write(APNsPayload(message))
    }

    /// Refuses a message APNs would refuse: over 4096 bytes, a data key named `aps`, an
    /// `alert` push with no text, a collapse id over 64 bytes.
    ///
    /// - Returns: The rendered body (``render(_:)``), checked.
    @discardableResult
    public static func validate(_ message: PushMessage) throws(PushValidationError) -> Data {
        if let verbatim = message.verbatim {
            guard verbatim.apnsHeaders != nil else { throw PushValidationError(.invalidMessage, message: "the verbatim push has no APNs form") }
            return try PayloadChecks.checkSize(of: "the APNs payload", limit: maximumSize, service: "APNs") { Data(verbatim.body.utf8) }
        }
        if message.data["aps"] != nil {
            throw PushValidationError(.invalidMessage, message: "a data key cannot be named \"aps\"")
        }
        if message.kind == .alert, message.alert == nil {
            throw PushValidationError(.invalidMessage, message: "an alert push needs a title and body")
        }
        if let collapseID = message.collapseID, collapseID.utf8.count > maximumCollapseIDSize {
            throw PushValidationError(
                .invalidMessage,
                message: "the collapse id is \(collapseID.utf8.count) bytes; APNs allows \(maximumCollapseIDSize)"
            )
        }
        return try PayloadChecks.checkSize(of: "the APNs payload", limit: maximumSize, service: "APNs") {
            try render(message)
        }
    }
}

extension APNsPayload {
    private struct DataKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        static let aps = DataKey(stringValue: "aps")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DataKey.self)
        for (key, value) in data where key != DataKey.aps.stringValue {
            try container.encode(value, forKey: DataKey(stringValue: key))
        }
        try container.encode(aps, forKey: .aps)
    }

    /// Reads a payload back; keys beside `aps` whose value is not a string are skipped.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DataKey.self)
        aps = try container.decode(APS.self, forKey: .aps)
        var data: [String: String] = [:]
        for key in container.allKeys where key.stringValue != DataKey.aps.stringValue {
            if let value = try? container.decode(String.self, forKey: key) {
                data[key.stringValue] = value
            }
        }
        self.data = data
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
