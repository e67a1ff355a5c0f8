/// The visible text of a push: a wallet backend's `notification`, a wake push's generic alert.
public struct NotificationText: Codable, Hashable, Sendable {
    public var title: String
    public var body: String
    /// An image URL (FCM `notification.image`).
    public var image: String?

    public init(title: String, body: String, image: String? = nil) {
        self.title = title
        self.body = body
        self.image = image
    }
}

/// The body of `POST /api/v1/users/{user_id}/events`: one event of a wallet backend, pushed to
/// every session of the user in the structure the backend's apps expect (`notification`, string
/// `data`).
public struct BackendEventRequest: Codable, Hashable, Sendable {
    public var action: BackendAction
    /// The custom keys (`transaction_id`, `amount` …). Strings; integers and booleans are
    /// accepted and sent as their text, because FCM carries only strings.
    public var data: [String: JSONValue]?
    public var notification: NotificationText
    public var campaignID: String?
    public var campaignName: String?
    /// The Android notification channel; `default` when absent.
    public var channelID: String?
    /// Android `notification.color` (`#4CAF50`).
    public var color: String?
    /// Android `notification.icon` (`ic_notification`).
    public var icon: String?

    public init(
        action: BackendAction,
        data: [String: JSONValue]? = nil,
        notification: NotificationText,
        campaignID: String? = nil,
        campaignName: String? = nil,
        channelID: String? = nil,
        color: String? = nil,
        icon: String? = nil
    ) {
        self.action = action
        self.data = data
        self.notification = notification
        self.campaignID = campaignID
        self.campaignName = campaignName
        self.channelID = channelID
        self.color = color
        self.icon = icon
    }

    enum CodingKeys: String, CodingKey {
        case action, data, notification, color, icon
        case campaignID = "campaign_id"
        case campaignName = "campaign_name"
        case channelID = "channel_id"
    }

    /// The keys Herald writes itself into the push data; a backend sets them at the top level.
    public static let envelopeKeys: Set<String> = ["action", "campaign_id", "campaign_name"]

    /// The push's `data` map: `action`, `campaign_id`, `campaign_name` (empty strings
    /// when absent) and the custom keys, every value a string, after checking that the five
    /// documented actions carry their documented fields.
    public func pushData() throws(BackendEventError) -> [String: String] {
        guard !action.rawValue.isEmpty, action.rawValue.utf8.count <= 64 else {
            throw BackendEventError(field: "action", message: "action must be 1 to 64 bytes")
        }
        guard !notification.title.isEmpty else {
            throw BackendEventError(field: "notification.title", message: "notification.title must not be empty")
        }
        var map: [String: String] = [:]
        for (key, value) in data ?? [:] {
            if Self.envelopeKeys.contains(key) {
                throw BackendEventError(field: "data.\(key)", message: "data.\(key) is not allowed: set \(key) at the top level of the event")
            }
            switch value {
            case .string(let text): map[key] = text
            case .int(let number): map[key] = String(number)
            case .bool(let flag): map[key] = flag ? "true" : "false"
            case .double:
                // A float cannot carry money exactly; backends send amounts as decimal strings.
                throw BackendEventError(field: "data.\(key)", message: "data.\(key) must be a string (send decimals as \"100.00\")")
            case .null, .array, .object:
                throw BackendEventError(field: "data.\(key)", message: "data.\(key) must be a string: push data carries strings only")
            }
        }
        for field in action.documentedFields {
            guard let value = map[field], !value.isEmpty else {
                throw BackendEventError(
                    field: "data.\(field)",
                    message: "\(action.rawValue) needs data.\(field) (a non-empty string)"
                )
            }
            if field == "amount", !Self.isDecimal(value) {
                throw BackendEventError(
                    field: "data.amount",
                    message: "data.amount must be a decimal string such as \"100.00\", not \"\(value.prefix(32))\""
                )
            }
        }
        map["action"] = action.rawValue
        map["campaign_id"] = campaignID ?? ""
        map["campaign_name"] = campaignName ?? ""
        return map
    }

    /// Digits with an optional fractional part: `100`, `100.00`, `0.000001`. No sign, no exponent.
    static func isDecimal(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }) else {
            return false
        }
        return text.utf8.count <= 64
    }
}

extension BackendAction {
    /// The data fields this action must carry (docs/http-api.md lists them); empty for `NONE` and
    /// for actions Herald does not know, which pass through unchecked.
    public var documentedFields: [String] {
        switch self {
        case .depositReceived, .depositConfirmed: ["transaction_id", "amount", "asset", "network"]
        case .withdrawalInitiated: ["transaction_id", "amount", "asset", "destination"]
        case .withdrawalProcessed: ["transaction_id", "amount", "asset", "status"]
        default: []
        }
    }
}

/// A backend event that does not match its action's documented shape.
public struct BackendEventError: Error, Hashable, Sendable {
    /// The offending field, as a path (`data.amount`).
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
