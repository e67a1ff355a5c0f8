import Foundation
import HeraldWire
import NIOCore
import NIOPosix
import NIOSSL

/// How Herald reaches a Nostr relay, for publishing and subscribing alike: TLS with the extra
/// trust roots, the HTTPS proxy where it applies, and a relay on a private address refused
/// unless allowed (the address checked is the address connected to).
struct RelayConnector: Sendable {
    let configuration: NostrRelayProvider.Configuration
    private let tls: NIOSSLContext

    init(configuration: NostrRelayProvider.Configuration) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = configuration.extraTrustRootsPEMFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(path))]
        }
        self.tls = try NIOSSLContext(configuration: tls)
        self.configuration = configuration
    }

    /// The relay is not a `wss://` URL, or resolves to an address that is not allowed.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// The relay's NIP-11 document, read as a subscription would connect. Within 5 s at most:
    /// the subscriptions wait for it, and the defaults serve when it does not come.
    func information(url: String) async throws -> RelayInformation? {
        let (address, proxy) = try await route(url)
        return try await RelayWebSocket.information(
            url: url, address: address, tlsContext: tls, proxy: proxy, group: MultiThreadedEventLoopGroup.singleton,
            timeout: TimeAmount(min(configuration.timeout, .seconds(5))))
    }

    /// Where to connect for `url`: its checked address (nil when private relays are allowed or
    /// the proxy resolves it) and the proxy when it applies.
    private func route(_ url: String) async throws -> (SocketAddress?, EgressProxy?) {
        guard NostrRelayURL.isValid(url), let parsed = URL(string: url), let host = parsed.host else {
            throw Refused(description: "not a wss:// relay URL")
        }
        let proxied = configuration.proxy.map { $0.applies(to: host) } ?? false
        var address: SocketAddress?
        if !configuration.allowPrivateRelays, !proxied {
            do {
                address = try await EndpointAddresses.checkedAddress(host: host, port: parsed.port ?? 443)
            } catch {
                throw Refused(description: "\(error)")
            }
        }
        return (address, proxied ? configuration.proxy : nil)
    }

    /// Connects to `url` and runs `exchange` over the WebSocket (``RelayWebSocket/run``).
    func run(
        url: String,
        _ exchange:
            @Sendable (_ send: @Sendable (String) async throws -> Void, _ messages: RelayMessages) async throws -> Void
    ) async throws {
        let (address, proxy) = try await route(url)
        try await RelayWebSocket.run(
            url: url, address: address, tlsContext: tls, proxy: proxy, group: MultiThreadedEventLoopGroup.singleton,
            connectTimeout: TimeAmount(configuration.timeout), exchange)
    }
}
