import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore

/// A local look-alike of a Nostr relay (NIP-01) on 127.0.0.1: WebSocket over TLS. It takes
/// `["EVENT", <event>]` and answers `["OK", <id>, true, ""]`, or what the test scripted: a
/// refusal (`["OK", <id>, false, "blocked: …"]`) or a dropped connection.
public struct MockNostrRelay: Sendable {
    /// Every EVENT received, in order, with the answer given.
    public let events = RequestLog<MockRelayEvent>()
    /// Answers scripted for the next EVENTs (key ``scriptKey``).
    public let script = AnswerScript<MockRelayAnswer>()
    public static let scriptKey = "EVENT"

    let certificate: TestCertificate

    public init(certificate: TestCertificate) {
        self.certificate = certificate
    }

    /// - Parameter port: 0 for any free port; a fixed one to come back where a client expects it.
    public func start(
        port: Int = 0, logger: Logger = Logger(label: "mock-relay", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        let events = self.events
        let script = self.script
        let server: HTTPServerBuilder = .http1WebSocketUpgrade { _, _, _ in
            .upgrade([:]) { inbound, outbound, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message,
                        let frame = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
                        frame.first as? String == "EVENT", frame.count == 2, let event = frame[1] as? [String: Any],
                        let eventJSON = try? JSONSerialization.data(withJSONObject: event)
                    else { continue }
                    let id = event["id"] as? String ?? ""
                    let answer = await script.next(for: Self.scriptKey) ?? .accepted
                    await events.append(MockRelayEvent(id: id, event: eventJSON, answer: answer))
                    switch answer {
                    case .accepted:
                        try await outbound.write(.text(Self.ok(id, true, "")))
                    case .refused(let reason):
                        try await outbound.write(.text(Self.ok(id, false, reason)))
                    case .drop:
                        // Gone without an answer, as a relay that crashes or cuts the line.
                        return
                    }
                }
            }
        }
        let tls = try certificate.serverTLSConfiguration()
        return try await RunningMockServer.start(
            router: Router(context: MockRequestContext.self), server: try .tls(server, tlsConfiguration: tls), tls: true, port: port,
            logger: logger)
    }

    public func withRunning<T: Sendable>(_ body: (RunningMockServer) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }

    static func ok(_ id: String, _ accepted: Bool, _ message: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: ["OK", id, accepted, message])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }
}

/// The relay's `wss://` URL, by name: the WebSocket client sends the host as SNI, which an IP
/// address cannot be (the test certificate names `localhost`).
extension RunningMockServer {
    public var relayURL: String { "wss://localhost:\(port)" }
}

public enum MockRelayAnswer: Sendable, Hashable {
    case accepted
    /// `["OK", id, false, reason]`; NIP-01 prefixes the reason (`blocked:`, `rate-limited:` …).
    case refused(String)
    /// The connection closes without an answer.
    case drop
}

public struct MockRelayEvent: Sendable {
    public var id: String
    /// The event as received (JSON).
    public var event: Data
    public var answer: MockRelayAnswer
}
