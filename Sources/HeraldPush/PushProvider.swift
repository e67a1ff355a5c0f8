import Foundation
import HeraldWire
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

    /// Sends several messages to one device in the order given, as ``PushMessage/prelude``
    /// asks: each is written to the service after the one before it, and none waits for an
    /// earlier one's answer. One outcome per message, in order.
    func send(inOrder messages: [PushMessage], to target: PushTarget, logger: Logger) async -> [PushOutcome]

    /// What an operator can see of the provider right now (the dashboard shows it).
    var status: PushProviderStatus { get }
}

extension PushProvider {
    /// One after the other: right for a provider with nothing in flight between a send and its
    /// answer (the local development provider), and for FCM, which promises no order anyway.
    public func send(inOrder messages: [PushMessage], to target: PushTarget, logger: Logger) async -> [PushOutcome] {
        var outcomes: [PushOutcome] = []
        outcomes.reserveCapacity(messages.count)
        for message in messages { outcomes.append(await send(message, to: target, logger: logger)) }
        return outcomes
    }

    /// A provider that keeps neither connections nor a bearer token reports nothing more than its name.
    public var status: PushProviderStatus { PushProviderStatus(name: name) }
}

/// A provider's connection and bearer token, as far as it has them. Nil means it has no such
/// thing (the local development provider), not that it is unknown.
public struct PushProviderStatus: Sendable, Hashable {
    public var name: String
    /// HTTP/2 connections open (or opening) to the push service.
    public var openConnections: Int?
    /// When the bearer token now in use was issued (APNs provider token, Google access token);
    /// nil when the provider has none yet, or uses none.
    public var tokenIssuedAt: Date?
    /// Whether the provider signs its requests with a bearer token at all.
    public var usesToken: Bool

    public init(name: String, openConnections: Int? = nil, tokenIssuedAt: Date? = nil, usesToken: Bool = false) {
        self.name = name
        self.openConnections = openConnections
        self.tokenIssuedAt = tokenIssuedAt
        self.usesToken = usesToken
    }
}

/// Why a message cannot be sent through a provider: its code is the one clients and dead
/// letters see (`payload_too_large`, `invalid_message`, `platform_not_configured`, `unknown_app`).
public struct PushValidationError: ErrorCodeProviding, Sendable, Hashable {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }
}
