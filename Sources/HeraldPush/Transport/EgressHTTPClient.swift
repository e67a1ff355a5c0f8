import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The client for what is not APNs: Web Push endpoints and Google's token endpoint. HTTP/1.1 or
/// HTTP/2, whichever the server offers by ALPN (self-hosted distributors often speak HTTP/1.1
/// only), directly or through the ``EgressProxy``; redirects are never followed (a push service
/// that redirects is answered as it answered).
///
/// Two AsyncHTTPClient clients, one through the proxy and one direct, because `NO_PROXY` is
/// decided per host and a client's proxy is fixed.
public final class EgressHTTPClient: Sendable {
    /// Checks the address a direct connection reached before any request is written on it (a
    /// host that resolved to a public address at registration may resolve elsewhere now).
    public typealias AddressCheck = @Sendable (SocketAddress?) -> Bool

    public struct AddressRefused: Error, CustomStringConvertible {
        public var description: String { "the connection reached an address that is not allowed" }
    }

    private let direct: HTTPClient
    private let proxied: HTTPClient?
    public let proxy: EgressProxy?

    /// - Parameters:
    ///   - extraTrustRootsPEMFile: PEM certificates trusted beside the system's (`tls.ca_file`).
    ///   - connectTimeout: TCP connect (and the proxy's CONNECT) plus the TLS handshake.
    ///   - addressCheck: Refuses direct connections to addresses it returns false for.
    public init(
        proxy: EgressProxy?,
        extraTrustRootsPEMFile: String? = nil,
        connectTimeout: Duration = .seconds(10),
        connectionsPerHost: Int = 8,
        addressCheck: AddressCheck? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = extraTrustRootsPEMFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(path))]
        }
        func configuration(proxy: EgressProxy?, check: AddressCheck?) -> HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls,
                redirectConfiguration: .disallow,
                timeout: .init(connect: TimeAmount(connectTimeout)),
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost),
                proxy: proxy.map { proxy in
                    .server(
                        host: proxy.host, port: proxy.port,
                        authorization: proxy.authorization.map {
                            .basic(credentials: String($0.dropFirst("Basic ".count)))
                        })
                }
            )
            // A failed connect (a refused address, a proxy that is down) fails the request at
            // once: the outbox retries it with its own backoff instead of a request held open.
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.httpVersion = .automatic
            if let check {
                let verify: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                    if check(channel.remoteAddress) { return channel.eventLoop.makeSucceededVoidFuture() }
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(AddressRefused())
                }
                configuration.http1_1ConnectionDebugInitializer = verify
                configuration.http2ConnectionDebugInitializer = verify
            }
            return configuration
        }
        self.proxy = proxy
        // Through a proxy the connection's peer is the proxy, which the operator chose: the
        // check applies to direct connections only.
        self.direct = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration(proxy: nil, check: addressCheck))
        self.proxied = proxy.map { HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration(proxy: $0, check: nil)) }
    }

    /// Whether a request to `host` goes through the proxy.
    public func isProxied(_ host: String) -> Bool {
        proxied != nil && (proxy?.applies(to: host) ?? false)
    }

    /// Sends `request` and reads at most `maxBody` bytes of the answer, all within `timeout`.
    public func execute(
        _ request: HTTPClientRequest, host: String, timeout: Duration, maxBody: Int = 64 * 1024
    ) async throws -> (response: HTTPClientResponse, body: ByteBuffer) {
        let client = isProxied(host) ? proxied! : direct
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let response = try await client.execute(request, deadline: deadline)
        var body = ByteBuffer()
        for try await var part in response.body {
            let room = maxBody - body.readableBytes
            guard room > 0 else { break }
            if part.readableBytes > room { part = part.getSlice(at: part.readerIndex, length: room) ?? part }
            body.writeBuffer(&part)
        }
        return (response, body)
    }

    public func shutdown() async {
        try? await direct.shutdown()
        try? await proxied?.shutdown()
    }
}
