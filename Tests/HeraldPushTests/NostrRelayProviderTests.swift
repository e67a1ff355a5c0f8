import Foundation
import HeraldNostr
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Testing

@Suite("Nostr relay publisher, on the wire")
struct NostrRelayProviderTests {
    static func event() -> NostrEvent {
        NostrEvent.signed(
            kind: 9735, tags: [["p", String(repeating: "ab", count: 32)]], content: "", createdAt: 1_764_000_000, by: NostrSecretKey.generate().key)
    }

    func run<T: Sendable>(allowPrivate: Bool = true, _ body: (NostrRelayProvider, MockNostrRelay, String) async throws -> T) async throws -> T {
        let certificate = try TestCertificate.make()
        let relay = MockNostrRelay(certificate: certificate)
        return try await relay.withRunning { running in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            let provider = try NostrRelayProvider(configuration: .init(allowPrivateRelays: allowPrivate, extraTrustRootsPEMFile: caFile))
            return try await body(provider, relay, running.relayURL)
        }
    }

    static func message(_ event: NostrEvent) -> PushMessage {
        PushMessage(kind: .background, data: [NostrRelayProvider.eventKey: event.json])
    }

    @Test("an EVENT the relay takes is delivered; the relay got the event as signed")
    func accepted() async throws {
        let event = Self.event()
        let outcome = try await run { provider, relay, url in
            let outcome = await provider.send(Self.message(event), to: PushTarget(destination: .nostr, token: url), logger: testLogger)
            let received = try #require(await relay.events.all.first)
            #expect(received.id == event.id)
            let decoded = try WireJSON.decode(NostrEvent.self, from: received.event)
            #expect(decoded == event)
            #expect(decoded.isValid)
            return outcome
        }
        #expect(outcome.kind == .delivered)
    }

    @Test("a relay named by its IP address is reached over TLS: no SNI is sent for it, and the certificate is checked against the address")
    func ipLiteral() async throws {
        let event = Self.event()
        let outcome = try await run { provider, relay, url in
            let byAddress = url.replacingOccurrences(of: "wss://localhost:", with: "wss://127.0.0.1:")
            #expect(byAddress != url)
            let outcome = await provider.send(Self.message(event), to: PushTarget(destination: .nostr, token: byAddress), logger: testLogger)
            #expect(await relay.events.all.first?.id == event.id)
            return outcome
        }
        #expect(outcome.kind == .delivered, "\(outcome)")
    }

    @Test("refusals by NIP-01 prefix: blocked and invalid are final, rate-limited and error retried, duplicate done; a dropped connection is retried")
    func answers() async throws {
        let cases: [(MockRelayAnswer, PushOutcome.Kind)] = [
            (.refused("blocked: not on the list"), .permanent), (.refused("invalid: bad signature"), .permanent),
            (.refused("rate-limited: slow down"), .retry), (.refused("error: disk full"), .retry),
            (.refused("duplicate: have it"), .delivered), (.drop, .retry),
        ]
        let outcomes = try await run { provider, relay, url in
            await relay.script.enqueue(cases.map(\.0), for: MockNostrRelay.scriptKey)
            var outcomes: [PushOutcome] = []
            for _ in cases {
                outcomes.append(await provider.send(Self.message(Self.event()), to: PushTarget(destination: .nostr, token: url), logger: testLogger))
            }
            return outcomes
        }
        #expect(outcomes.map(\.kind) == cases.map(\.1))
        #expect(outcomes[0].reason == "relay_refused: blocked: not on the list")
    }

    @Test("a relay on a private address is refused without connecting unless allowed")
    func privateRelay() async throws {
        let outcome = try await run(allowPrivate: false) { provider, relay, url in
            let outcome = await provider.send(Self.message(Self.event()), to: PushTarget(destination: .nostr, token: url), logger: testLogger)
            #expect(await relay.events.count == 0)
            return outcome
        }
        #expect(outcome.kind == .permanent)
        #expect(outcome.reason == "private_relay")
    }

    @Test("a relay that is not there is retried")
    func unreachable() async throws {
        let provider = try NostrRelayProvider(configuration: .init(allowPrivateRelays: true))
        let port = try LoopbackPort.free()
        let outcome = await provider.send(
            Self.message(Self.event()), to: PushTarget(destination: .nostr, token: "wss://127.0.0.1:\(port)"), logger: testLogger)
        #expect(outcome.kind == .retry)
    }

    @Test("through the HTTPS proxy: one CONNECT to the relay, the receipt delivered", .enabled(if: TinyProxy.isAvailable))
    func throughProxy() async throws {
        let proxy = try await TinyProxy.start()
        defer { Task { await proxy.stop() } }
        let certificate = try TestCertificate.make()
        let relay = MockNostrRelay(certificate: certificate)
        let outcome = try await relay.withRunning { running in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            let provider = try NostrRelayProvider(
                configuration: .init(extraTrustRootsPEMFile: caFile, proxy: EgressProxy(host: "127.0.0.1", port: proxy.port)))
            return await provider.send(Self.message(Self.event()), to: PushTarget(destination: .nostr, token: running.relayURL), logger: testLogger)
        }
        #expect(outcome.kind == .delivered)
        #expect(proxy.connects.count == 1)
        #expect(await relay.events.count == 1)
    }
}
