import Foundation
import HTTPTypes
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Publishes a signed Nostr event to one relay (NIP-01): a WebSocket to the relay URL (the job's
/// token), `["EVENT", <event>]`, and the relay's `["OK", <id>, <accepted>, <message>]`. What the
/// outbox delivers for zap receipts, one job per relay, so a relay that refuses or drops is
/// retried on its own.
public struct NostrRelayProvider: PushProvider {
    public var name: String { "nostr" }

    /// The data key holding the event's JSON.
    public static let eventKey = "event"

    public struct Configuration: Sendable {
        /// Relays on loopback, private, link-local or multicast addresses (tests).
        public var allowPrivateRelays = false
        /// PEM trust roots beside the system's (`tls.ca_file`).
        public var extraTrustRootsPEMFile: String?
        /// Connect, publish and the relay's answer, together.
        public var timeout: Duration = .seconds(15)
        public var proxy: EgressProxy?

        public init(allowPrivateRelays: Bool = false, extraTrustRootsPEMFile: String? = nil, proxy: EgressProxy? = nil) {
            self.allowPrivateRelays = allowPrivateRelays
            self.extraTrustRootsPEMFile = extraTrustRootsPEMFile
            self.proxy = proxy
        }
    }

    public var configuration: Configuration { connector.configuration }
    private let connector: RelayConnector

    public init(configuration: Configuration) throws {
        connector = try RelayConnector(configuration: configuration)
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard target.destination == .nostr, NostrRelayURL.isValid(target.token) else {
            throw PushValidationError(.invalidMessage, message: "a Nostr relay is a wss:// URL")
        }
        guard let event = message.data[Self.eventKey], event.utf8.first == UInt8(ascii: "{") else {
            throw PushValidationError(.invalidMessage, message: "a Nostr publication carries the signed event")
        }
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        do {
            try validate(message, for: target)
        } catch {
            return .refused(error, service: name, logger: logger)
        }
        let event = message.data[Self.eventKey] ?? "{}"
        let eventID = (try? WireJSON.decode(EventID.self, from: Data(event.utf8)))?.id ?? ""
        guard let host = URL(string: target.token)?.host else {
            return PushOutcome(kind: .permanent, reason: "invalid_relay")
        }
        let answer = Answer()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await self.publish(event, id: eventID, to: target.token, answer: answer)
                }
                group.addTask {
                    try await Task.sleep(for: configuration.timeout)
                    throw PublishTimeout()
                }
                try await group.next()
                group.cancelAll()
            }
        } catch let refused as RelayConnector.Refused {
            logger.warning("relay refused: \(refused)", metadata: ["nostr.relay": "\(host)"])
            return PushOutcome(kind: .permanent, reason: "private_relay")
        } catch {
            logger.notice(
                "relay publication failed; will retry",
                metadata: ["nostr.relay": "\(host)", "error.type": "\(type(of: error))", "error": "\(error)"])
            return PushOutcome(kind: .retry, reason: error is PublishTimeout ? "timeout" : "network_error")
        }
        guard let (accepted, said) = answer.value else {
            // The relay closed without an OK for the event.
            return PushOutcome(kind: .retry, reason: "no_ok")
        }
        return Self.outcome(accepted: accepted, message: said)
    }

    /// NIP-01's OK: accepted, or a refusal whose prefix says whether trying again can help.
    static func outcome(accepted: Bool, message: String) -> PushOutcome {
        let prefix = message.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        if accepted || prefix == "duplicate" { return PushOutcome(kind: .delivered, status: 200) }
        switch prefix {
        case "rate-limited", "error":
            return PushOutcome(kind: .retry, reason: String("\(prefix): \(message)".prefix(200)))
        default:
            // blocked, invalid, pow, restricted, and any other refusal: the relay will not take it.
            return PushOutcome(kind: .permanent, reason: String("relay_refused: \(message)".prefix(200)))
        }
    }

    private func publish(_ event: String, id: String, to relay: String, answer: Answer) async throws {
        try await connector.run(url: relay) { send, messages in
            try await send("[\"EVENT\",\(event)]")
            for try await text in messages {
                guard let reply = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
                    reply.count >= 3, reply[0] as? String == "OK", reply[1] as? String == id, let accepted = reply[2] as? Bool
                else { continue }
                answer.value = (accepted, reply.count > 3 ? (reply[3] as? String ?? "") : "")
                return
            }
        }
    }

    private struct EventID: Decodable { var id: String }
    private struct PublishTimeout: Error, CustomStringConvertible {
        var description: String { "no answer from the relay in time" }
    }

    /// The relay's answer, set from inside the WebSocket handler.
    private final class Answer: Sendable {
        private let box = NIOLockedValueBox<(Bool, String)?>(nil)
        var value: (Bool, String)? {
            get { box.withLockedValue { $0 } }
            set { box.withLockedValue { $0 = newValue } }
        }
    }
}
