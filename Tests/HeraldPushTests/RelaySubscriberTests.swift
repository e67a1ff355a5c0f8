import Foundation
import HeraldPush
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Nostr relay subscriber, on the wire")
struct RelaySubscriberTests {
    @Test("a relay that accepts the connection and never answers the TLS handshake is given up after the timeout", .timeLimit(.minutes(1)))
    func stalledHandshake() async throws {
        // A listening socket nobody accepts from: the kernel completes the TCP handshake, then silence.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        #expect(bound == 0)
        #expect(listen(listener, 8) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))

        var configuration = NostrRelayProvider.Configuration(allowPrivateRelays: true)
        configuration.timeout = .seconds(1)
        let subscriber = try NostrRelaySubscriber(configuration: configuration)
        let started = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            try await subscriber.run(
                url: "wss://localhost:\(port)", subscriptions: [(id: "a", filter: "{}")], logger: Logger(label: "test")
            ) { _, _ in }
        }
        let took = ContinuousClock.now - started
        #expect(took < .seconds(5), "the stalled relay held the subscriber for \(took)")
    }
}
