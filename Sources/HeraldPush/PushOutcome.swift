/// What a push service said about one send, reduced to what the outbox must do next.
public struct PushOutcome: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// Accepted by the push service.
        case delivered
        /// Try again later (throttled, service unavailable, network error).
        case retry
        /// The token will never work again (APNs 410 `Unregistered`, 400 `BadDeviceToken`,
        /// FCM `UNREGISTERED`): mark it dead, send nothing more to it.
        case tokenDead = "token_dead"
        /// This message can never be delivered (bad payload, bad credentials): dead-letter it.
        case permanent
    }

    public var kind: Kind
    /// The provider's reason code (`Unregistered`, `TooManyRequests`, `UNAVAILABLE` …).
    public var reason: String?
    /// HTTP status from the push service, when there was one.
    public var status: Int?
    /// When the service asked us to wait (`Retry-After`).
    public var retryAfter: Duration?
    /// The service's id for the accepted message (`apns-id`, FCM message name).
    public var providerMessageID: String?
    /// What the local development provider "sent", when it has no recorder of its own: the
    /// outbox keeps these in the transaction that records this outcome (one commit, not two).
    public var recorded: [RecordedPush] = []

    public init(
        kind: Kind,
        reason: String? = nil,
        status: Int? = nil,
        retryAfter: Duration? = nil,
        providerMessageID: String? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.status = status
        self.retryAfter = retryAfter
        self.providerMessageID = providerMessageID
    }

    public static func delivered(id: String? = nil) -> PushOutcome {
        PushOutcome(kind: .delivered, status: 200, providerMessageID: id)
    }

    public var description: String {
        var text = kind.rawValue
        if let status { text += " \(status)" }
        if let reason { text += " \(reason)" }
        return text
    }
}
