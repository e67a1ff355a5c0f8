import AsyncHTTPClient
import Logging
import NIOCore
import NIOSSL

/// Builds the `HTTPClient` the push providers share.
///
/// How AsyncHTTPClient 1.37 carries pushes (read from its `HTTPConnectionPool` state machines):
/// - One pool per scheme/host/port/TLS configuration. Over `https` it offers `h2` by ALPN;
///   APNs and FCM accept it. The pool starts in HTTP/1 mode and migrates to HTTP/2 when the
///   first connection negotiates `h2`; connections opened during that first burst are then
///   closed, keeping at most one per event loop.
/// - A request without a required event loop takes a free stream on *any* open connection to
///   the host. A new connection is opened only when none exists or is starting, so in practice
///   one TLS connection per host carries every concurrent send.
/// - A connection carries as many concurrent streams as the server's
///   `SETTINGS_MAX_CONCURRENT_STREAMS` (100 if the server names none); AHC follows SETTINGS
///   updates on a live connection (APNs may change its limit during a connection). Requests
///   beyond the limit wait in the pool's queue for a free stream, not for a new connection;
///   that wait counts against the connect timeout.
/// - On GOAWAY (APNs closes idle or old connections) the connection drains and the next
///   request opens a new one.
/// Measured with the mock APNs (`HeraldPushTests`): 200 concurrent sends went over one
/// connection, with up to 100 streams in flight at once (the mock's limit, NIOHTTP2's
/// default; how many overlap depends on load).
/// So the client needs no HTTP/2 tuning; the HTTP/1 soft limit below only matters for a
/// plain-`http` endpoint (a local mock).
public enum PushHTTPClient {
    /// - Parameters:
    ///   - extraTrustRootsPEMFile: PEM certificates trusted in addition to the system roots
    ///     (`HERALD_TLS_CA_FILE`): a local APNs/FCM look-alike, a TLS-inspecting proxy. Read
    ///     now, so a missing or broken file fails at start-up rather than on every send.
    ///   - connectTimeout: Connection set-up, TLS included; also the longest a request waits
    ///     for a connection or a free stream.
    ///   - readTimeout: The longest silence while waiting for an answer.
    ///   - backgroundLogger: For the pool's own work (connections opening and closing).
    public static func make(
        extraTrustRootsPEMFile: String? = nil,
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
        connectTimeout: Duration = .seconds(10),
        readTimeout: Duration = .seconds(30),
        backgroundLogger: Logger? = nil
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let path = extraTrustRootsPEMFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(path))]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            // Push services never redirect; following one would send the bearer token elsewhere.
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(connectTimeout), read: TimeAmount(readTimeout))
        )
        configuration.httpVersion = .automatic
        // Apple asks senders to keep connections open rather than reconnect per burst.
        configuration.connectionPool = .init(idleTimeout: .minutes(10), concurrentHTTP1ConnectionsPerHostSoftLimit: 8)
        if let backgroundLogger {
            return HTTPClient(
                eventLoopGroup: eventLoopGroup,
                configuration: configuration,
                backgroundActivityLogger: backgroundLogger
            )
        }
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }
}
