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
    /// `payload_too_large`, `invalid_message`, `platform_not_configured`.
    public var code: String
    public var message: String
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
