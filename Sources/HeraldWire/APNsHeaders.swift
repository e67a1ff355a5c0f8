/// The headers of one APNs request, beside its body: what Herald's own pushes, the wake
/// gateway's and ActivityKit's all say to APNs, written by one function in one order.
public struct APNsHeaders: Sendable, Hashable {
    /// `apns-push-type`, which decides `apns-priority` too: the rule is kept here and nowhere else.
    public enum PushType: Sendable, Hashable {
        /// A visible alert (a wake or a plain alert).
        case alert
        /// `content-available` only.
        case background
        /// An ActivityKit push; its topic is the app's Live Activity topic
        /// (``LiveActivityPayload/topic(bundleID:)``).
        case liveActivity(LiveActivityEvent)

        /// The header's value.
        public var name: String {
            switch self {
            case .alert: "alert"
            case .background: "background"
            case .liveActivity: LiveActivityPayload.pushType
            }
        }

        /// `apns-priority`: 10 for what the user should see at once (an alert, a Live Activity
        /// starting or ending). 5 for background pushes, for which Apple rejects 10 and which it
        /// throttles anyway, and for Live Activity updates, which 5 keeps out of the app's budget.
        public var priority: Int {
            switch self {
            case .alert, .liveActivity(.start), .liveActivity(.end): 10
            case .background, .liveActivity(.update): 5
            }
        }
    }

    /// `apns-topic`; nil leaves it to the sender, whose credentials name the app.
    public var topic: String?
    /// `apns-id`; nil lets APNs make one.
    public var id: String?
    /// `apns-expiration` in Unix seconds; 0 means "deliver now or never", nil sends no header.
    public var expiration: Int64?
    public var pushType: PushType
    /// `apns-collapse-id`.
    public var collapseID: String?

    public init(topic: String? = nil, id: String? = nil, expiration: Int64? = nil, pushType: PushType, collapseID: String? = nil) {
        self.topic = topic
        self.id = id
        self.expiration = expiration
        self.pushType = pushType
        self.collapseID = collapseID
    }

    /// Calls `add` with each header, in the order bitkit-core's wake vectors pin byte for byte:
    /// `apns-topic`, `apns-id`, `apns-expiration`, `apns-push-type`, `apns-priority`,
    /// `apns-collapse-id`; those that are nil are left out.
    public func write(_ add: (_ name: String, _ value: String) -> Void) {
        if let topic { add("apns-topic", topic) }
        if let id { add("apns-id", id) }
        if let expiration { add("apns-expiration", String(expiration)) }
        add("apns-push-type", pushType.name)
        add("apns-priority", String(pushType.priority))
        if let collapseID { add("apns-collapse-id", collapseID) }
    }

    /// The headers as `[name, value]` pairs, in ``write(_:)``'s order: how a push rendered ahead
    /// of its send is stored with its job.
    public var fields: [[String]] {
        var fields: [[String]] = []
        fields.reserveCapacity(6)
        write { fields.append([$0, $1]) }
        return fields
    }
}
