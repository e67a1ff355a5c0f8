import Foundation
import HeraldWire
import Logging

/// One push the local development provider "sent": what the device would have received.
public struct RecordedPush: Sendable, Hashable {
    public var target: PushTarget
    /// The JSON the app would see. iOS: the APNs body, `aps` beside the data keys (an
    /// extension's `userInfo`). Android: the flat `data` string map (`RemoteMessage.data`).
    public var payload: Data
    public var message: PushMessage

    public init(target: PushTarget, payload: Data, message: PushMessage) {
        self.target = target
        self.payload = payload
        self.message = message
    }
}

/// A provider for running with no APNs or FCM credentials: renders each push exactly as the
/// real provider for its platform would, and keeps it instead of sending it: the server stores
/// it so `herald device` can pick it up.
public struct LocalDevelopmentProvider: PushProvider {
    /// Keeps a rendered push. Throwing makes the send a retry, as a push service outage would.
    public typealias Recorder = @Sendable (RecordedPush) async throws -> Void

    public var name: String { "local" }

    private let recorder: Recorder?
    private let now: @Sendable () -> Date
    /// As ``WebPushProvider/navigateURL``: Web Push is rendered as that provider would send it.
    public let webPushNavigateURL: String?

    /// - Parameter recorder: keeps each push as it is sent. Nil: the push rides on its outcome
    ///   (``PushOutcome/recorded``), for the outbox to store with the outcome in one commit.
    public init(now: @escaping @Sendable () -> Date = { Date() }, recorder: Recorder?, webPushNavigateURL: String? = nil) {
        self.recorder = recorder
        self.now = now
        self.webPushNavigateURL = webPushNavigateURL
    }

    /// Each push rides on its outcome, for the outbox to store with it, as `herald serve` has it.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(now: now, recorder: nil)
    }

    /// The real providers' rules: the token's form for its platform, the payload's size and
    /// reserved keys. What passes here passes APNs and FCM too.
    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        _ = try check(message, for: target)
    }

    /// ``validate(_:for:)``, returning the APNs or Web Push body its size check rendered (nil on
    /// the other platforms), so that a send does not render it again.
    private func check(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) -> Data? {
        try PushTokenForm.check(target.token, destination: target.destination)
        switch target.destination {
        case .device(.ios): return try APNsPayload.validate(message)
        case .device(.android): try FCMPayload.validate(message, now: now())
        case .device(.webpush): return try WebPushPayload.validate(message, navigate: webPushNavigate(target))
        case .nostr: throw PushValidationError(.platformNotConfigured, message: "relays are published to, never recorded")
        case .webhook: throw PushValidationError(.platformNotConfigured, message: "webhooks are posted to, never recorded")
        case .dns: throw PushValidationError(.platformNotConfigured, message: "DNS records are written to a server, never recorded")
        }
        return nil
    }

    /// The navigate URL for a Web Push target that asked for the declarative form; nil otherwise.
    private func webPushNavigate(_ target: PushTarget) -> String? {
        WebPushSubscription(storageToken: target.token)?.declarative == true ? webPushNavigateURL : nil
    }

    /// The body the device would receive for `message` (a Web Push one in the plain form).
    public func render(_ message: PushMessage, for destination: JobDestination) throws -> Data {
        switch destination {
        case .device(.ios): try APNsPayload.render(message)
        case .device(.android): try FCMPayload.renderData(message)
        case .device(.webpush): try WebPushPayload.render(message)
        case .nostr: Data(message.data[NostrRelayProvider.eventKey]?.utf8 ?? "".utf8)
        case .webhook: Data(message.data[WebhookForwardProvider.bodyKey]?.utf8 ?? "".utf8)
        case .dns: Data()
        }
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        let payload: Data
        do {
            payload = try check(message, for: target) ?? render(message, for: target.destination)
        } catch {
            return .refused(error, service: "local", logger: logger)
        }
        let push = RecordedPush(target: target, payload: payload, message: message)
        var outcome = PushOutcome.delivered(id: UUID().uuidString)
        if let recorder {
            do {
                try await recorder(push)
            } catch {
                logger.warning("local push could not be recorded", metadata: ["error.type": "\(type(of: error))"])
                return PushOutcome(kind: .retry, reason: "recorder_failed")
            }
        } else {
            outcome.recorded = [push]
        }
        logger.info(
            "local push",
            metadata: [
                "platform": "\(target.destination.rawValue)",
                "push.token": "\(target.redactedToken)",
                // A webhook's notification_type, a wake's type, a backend event's action; a
                // sealed push names only its clear sealed_type.
                // A caller names it: escaped, so a newline in it cannot forge a second log line.
                "notification_type":
                    "\(loggable(message.data["notification_type"] ?? message.data["type"] ?? message.data["action"] ?? message.data["sealed_type"] ?? "-"))",
            ]
        )
        return outcome
    }
}

/// Caller-supplied text as one log field: control characters (a newline would start a forged
/// line) written as `\u{…}` escapes, at most 128 characters.
public func loggable(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars.prefix(128) {
        if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
            out += "\\u{\(String(scalar.value, radix: 16))}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return text.unicodeScalars.count > 128 ? out + "…" : out
}
