import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore

/// A local look-alike of a Nostr relay (NIP-01) on 127.0.0.1: WebSocket over TLS. It takes
/// `["EVENT", <event>]` and answers `["OK", <id>, true, ""]`, or what the test scripted: a
/// refusal (`["OK", <id>, false, "blocked: …"]`) or a dropped connection. It keeps what it
/// accepted and serves subscriptions: `["REQ", <id>, <filter>…]` gets the stored events that
/// match, `["EOSE", <id>]`, then each matching event as it is accepted, until `["CLOSE", <id>]`.
public struct MockNostrRelay: Sendable {
    /// Every EVENT received, in order, with the answer given.
    public let events = RequestLog<MockRelayEvent>()
    /// Every REQ received, in order (the frame as JSON).
    public let subscriptions = RequestLog<Data>()
    let hub = RelayHub()
    /// Answers scripted for the next EVENTs (key ``scriptKey``).
    public let script = AnswerScript<MockRelayAnswer>()
    public static let scriptKey = "EVENT"

    let certificate: TestCertificate
    /// Subscriptions one connection may hold, as real relays limit them (`nostr-relay` 32,
    /// strfry 20); past it a `REQ` is refused with a `NOTICE`, as `nostr-relay` does. nil: no limit.
    let subscriptionLimit: Int?
    /// Bytes of junk events sent to every new subscription as fast as the connection takes
    /// them, as a hostile relay would; 0: none.
    let floodBytes: Int

    /// The NIP-11 document served to a GET asking for `application/nostr+json`; nil serves none.
    let information: String?

    public init(certificate: TestCertificate, subscriptionLimit: Int? = nil, floodBytes: Int = 0, information: String? = nil) {
        self.certificate = certificate
        self.subscriptionLimit = subscriptionLimit
        self.floodBytes = floodBytes
        self.information = information
    }

    /// - Parameter port: 0 for any free port; a fixed one to come back where a client expects it.
    public func start(
        port: Int = 0, logger: Logger = Logger(label: "mock-relay", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        let events = self.events
        let script = self.script
        let subscriptions = self.subscriptions
        let hub = self.hub
        let limit = subscriptionLimit
        let flood = floodBytes
        let server: HTTPServerBuilder = .http1WebSocketUpgrade { _, _, _ in
            .upgrade([:]) { inbound, outbound, _ in
                let connection = UUID()
                defer { Task { await hub.drop(connection) } }
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message,
                        let frame = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any], let verb = frame.first as? String
                    else { continue }
                    if verb == "REQ", frame.count >= 2, let id = frame[1] as? String {
                        await subscriptions.append(Data(text.utf8))
                        if let limit, await hub.count(of: connection, without: id) >= limit {
                            try await outbound.write(.text(#"["NOTICE","rejected: too many subscriptions"]"#))
                            continue
                        }
                        let filters = frame.dropFirst(2).compactMap { $0 as? [String: Any] }.map(RelayFilter.init)
                        let stored = await hub.subscribe(connection, id: id, filters: filters) { text in
                            try? await outbound.write(.text(text))
                        }
                        for event in stored { try await outbound.write(.text(Self.eventFrame(id, event))) }
                        try await outbound.write(.text(#"["EOSE",""# + id + #""]"#))
                        if flood > 0 {
                            let junk = #"["EVENT",""# + id + #"",{"kind":23194,"content":""# + String(repeating: "x", count: 60_000) + #""}]"#
                            var sent = 0
                            while sent < flood {
                                try await outbound.write(.text(junk))
                                sent += junk.utf8.count
                            }
                        }
                        continue
                    }
                    if verb == "CLOSE", frame.count == 2, let id = frame[1] as? String {
                        await hub.unsubscribe(connection, id: id)
                        continue
                    }
                    guard verb == "EVENT", frame.count == 2, let event = frame[1] as? [String: Any],
                        let eventJSON = try? JSONSerialization.data(withJSONObject: event)
                    else { continue }
                    let id = event["id"] as? String ?? ""
                    let answer = await script.next(for: Self.scriptKey) ?? .accepted
                    await events.append(MockRelayEvent(id: id, event: eventJSON, answer: answer))
                    switch answer {
                    case .accepted:
                        await hub.publish(eventJSON)
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
        let router = Router(context: MockRequestContext.self)
        if let information {
            router.get("/") { request, _ -> Response in
                guard request.headers[.accept] == "application/nostr+json" else { return Response(status: .notFound) }
                return Response(
                    status: .ok, headers: [.contentType: "application/nostr+json"], body: ResponseBody(byteBuffer: ByteBuffer(string: information)))
            }
        }
        return try await RunningMockServer.start(
            router: router, server: try .tls(server, tlsConfiguration: tls), tls: true, port: port,
            logger: logger)
    }

    public func withRunning<T: Sendable>(_ body: (RunningMockServer) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }

    /// Stores an event as if a client had published it, and sends it to matching subscriptions.
    public func publish(_ eventJSON: Data) async {
        await hub.publish(eventJSON)
    }

    /// Subscriptions open now, over every connection.
    public func openSubscriptions() async -> Int { await hub.count }

    /// `["EVENT", <subscription>, <event>]`, the event's JSON as it was published.
    static func eventFrame(_ subscription: String, _ event: Data) -> String {
        let id =
            (try? JSONSerialization.data(withJSONObject: [subscription])).map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "\"\""
        return #"["EVENT","# + id + "," + String(decoding: event, as: UTF8.self) + "]"
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

/// One NIP-01 filter: `ids`, `authors`, `kinds`, `#<letter>` tag values, `since`, `until`.
struct RelayFilter: @unchecked Sendable {
    let fields: [String: Any]
    init(_ fields: [String: Any]) { self.fields = fields }

    func matches(_ event: [String: Any]) -> Bool {
        if let ids = fields["ids"] as? [String], !ids.contains(event["id"] as? String ?? "") { return false }
        if let authors = fields["authors"] as? [String], !authors.contains(event["pubkey"] as? String ?? "") { return false }
        if let kinds = fields["kinds"] as? [Int], !kinds.contains(event["kind"] as? Int ?? -1) { return false }
        let createdAt = event["created_at"] as? Int ?? 0
        if let since = fields["since"] as? Int, createdAt < since { return false }
        if let until = fields["until"] as? Int, createdAt > until { return false }
        let tags = event["tags"] as? [[String]] ?? []
        for (key, value) in fields where key.hasPrefix("#") {
            let name = String(key.dropFirst())
            guard let wanted = value as? [String], tags.contains(where: { $0.count >= 2 && $0[0] == name && wanted.contains($0[1]) }) else {
                return false
            }
        }
        return true
    }
}

/// What the relay holds: the events it accepted and the open subscriptions of every connection.
actor RelayHub {
    struct Subscription {
        var filters: [RelayFilter]
        var send: @Sendable (String) async -> Void
    }
    private var stored: [Data] = []
    private var storedIDs: Set<String> = []
    private var open: [UUID: [String: Subscription]] = [:]

    var count: Int { open.values.reduce(0) { $0 + $1.count } }

    /// The subscriptions one connection holds, not counting `id` (a `REQ` may replace its own).
    func count(of connection: UUID, without id: String) -> Int {
        (open[connection] ?? [:]).keys.filter { $0 != id }.count
    }

    static func fields(_ event: Data) -> [String: Any] { (try? JSONSerialization.jsonObject(with: event) as? [String: Any]) ?? [:] }

    /// Opens (or replaces) a subscription; returns the stored events it matches.
    func subscribe(_ connection: UUID, id: String, filters: [RelayFilter], send: @escaping @Sendable (String) async -> Void) -> [Data] {
        open[connection, default: [:]][id] = Subscription(filters: filters, send: send)
        return stored.filter { event in
            let fields = Self.fields(event)
            return filters.contains { $0.matches(fields) }
        }
    }

    func unsubscribe(_ connection: UUID, id: String) { open[connection]?[id] = nil }

    func drop(_ connection: UUID) { open[connection] = nil }

    func publish(_ event: Data) async {
        let fields = Self.fields(event)
        let id = fields["id"] as? String ?? ""
        if storedIDs.insert(id).inserted { stored.append(event) }
        for (_, subscriptions) in open {
            for (subscription, entry) in subscriptions where entry.filters.contains(where: { $0.matches(fields) }) {
                await entry.send(MockNostrRelay.eventFrame(subscription, event))
            }
        }
    }
}
