import Logging

/// A push service: APNs, FCM, or the local development provider.
public protocol PushProvider: Sendable {
    /// A short name for metrics and logs (`apns`, `fcm`, `local`).
    var name: String { get }

    /// Refuses a message that can never be sent, before it is accepted: the payload is over
    /// the service's limit or the message is malformed for it.
    func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError)

    /// Sends one message. Never throws: every failure is an outcome the outbox can act on.
    func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome
}

/// Why a message cannot be sent through a provider.
public struct PushValidationError: Error, Sendable, Hashable {
    /// Typed so callers branch on the reason, never on its code's spelling.
    public enum Reason: String, Sendable, Hashable {
        case payloadTooLarge = "payload_too_large"
        case invalidMessage = "invalid_message"
        case platformNotConfigured = "platform_not_configured"
        case unknownApp = "unknown_app"
    }

    public var reason: Reason
    public var message: String
    /// The stable code clients and dead letters see.
    public var code: String { reason.rawValue }

    public init(_ reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }
}
