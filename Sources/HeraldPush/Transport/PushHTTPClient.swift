import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL

/// The client every provider sends through: HTTP/2 of our own for APNs and FCM, and
/// AsyncHTTPClient for Google's token endpoint and Web Push (``EgressHTTPClient``).
///
/// Built on swift-nio-http2 directly rather than AsyncHTTPClient, whose per-request machinery
/// (a stream channel, a pipeline and a task per request, a flush per stream) cost more than the
/// whole rest of a send. Here a request is a pair of frames written by one handler per
/// connection, and every request that arrives while the event loop is busy goes out in the same
/// flush (see ``PushConnection``).
///
/// One ``PushEndpoint`` per origin keeps ``Configuration/connectionsPerOrigin`` long-lived
/// connections (Apple asks for few) and uses as many concurrent streams on each as the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` allows. GOAWAY, a lost connection and an unanswered PING
/// move the requests the server did not process to a new connection.
public final class PushHTTPClient: Sendable {
    public struct Configuration: Sendable {
        /// PEM certificates trusted in addition to the system roots (`HERALD_TLS_CA_FILE`): a
        /// local APNs/FCM look-alike, a TLS-inspecting proxy.
        public var extraTrustRootsPEMFile: String?
        /// Connections kept per origin (`HERALD_APNS_CONNECTIONS`).
        public var connectionsPerOrigin: Int = 1
        /// TCP connect plus TLS handshake.
        public var connectTimeout: Duration = .seconds(10)
        /// Our own cap on streams per connection, below whatever the server allows.
        public var maxStreamsPerConnection: Int = 1000
        /// A connection that has read nothing for this long is probed with a PING.
        public var pingInterval: Duration = .seconds(60)
        /// A PING unanswered for this long closes the connection; its requests move on.
        public var pingTimeout: Duration = .seconds(20)
        /// How often deadlines and keep-alive are checked: one timer per connection, none per request.
        public var sweepInterval: Duration = .seconds(1)
        /// The HTTPS proxy every outgoing connection goes through (`NO_PROXY` hosts excepted).
        public var proxy: EgressProxy?
        /// Whether Web Push may connect to endpoints on non-public addresses.
        public var allowPrivateWebPushEndpoints = false

        public init(
            extraTrustRootsPEMFile: String? = nil,
            connectionsPerOrigin: Int = 1,
            connectTimeout: Duration = .seconds(10),
            proxy: EgressProxy? = nil,
            allowPrivateWebPushEndpoints: Bool = false
        ) {
            self.extraTrustRootsPEMFile = extraTrustRootsPEMFile
            self.connectionsPerOrigin = max(1, connectionsPerOrigin)
            self.connectTimeout = connectTimeout
            self.proxy = proxy
            self.allowPrivateWebPushEndpoints = allowPrivateWebPushEndpoints
        }
    }

    let configuration: Configuration
    let tlsContext: NIOSSLContext
    let eventLoopGroup: any EventLoopGroup
    /// Loops that keep a connection of their own per origin, for the sends they start.
    let localLoops: [any EventLoop]
    let logger: Logger
    /// HTTP/1.1-or-2 for Google's token endpoint.
    let tokenClient: EgressHTTPClient
    /// HTTP/1.1-or-2 for Web Push endpoints, refusing non-public addresses unless allowed.
    let webPushClient: EgressHTTPClient
    private let endpoints = NIOLockedValueBox([PushOrigin: PushEndpoint]())
    private let isShutDown = NIOLockedValueBox(false)

    /// Reads the trust roots now, so a missing or broken file fails at start-up rather than on
    /// every send.
    ///
    /// - Parameter localLoops: Event loops that send from themselves (the SQLite writer's, where
    ///   the dispatcher's sends start while it is idle). A request executed on one of them goes
    ///   over a connection of that loop's own, opened on first use beside the shared ones: it is
    ///   written without waking another thread, and its answer is read where it is recorded.
    public init(
        configuration: Configuration = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        localLoops: [any EventLoop] = [],
        logger: Logger = Logger(label: "herald.push-http", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        if let path = configuration.extraTrustRootsPEMFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(path))]
        }
        self.tlsContext = try NIOSSLContext(configuration: tls)
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.localLoops = localLoops
        self.logger = logger
        self.tokenClient = try EgressHTTPClient(
            proxy: configuration.proxy, extraTrustRootsPEMFile: configuration.extraTrustRootsPEMFile,
            connectTimeout: configuration.connectTimeout, eventLoopGroup: eventLoopGroup)
        let publicOnly: EgressHTTPClient.AddressCheck = { address in
            guard let address else { return false }
            return EndpointAddresses.isPublic(address)
        }
        self.webPushClient = try EgressHTTPClient(
            proxy: configuration.proxy, extraTrustRootsPEMFile: configuration.extraTrustRootsPEMFile,
            connectTimeout: configuration.connectTimeout,
            addressCheck: configuration.allowPrivateWebPushEndpoints ? nil : publicOnly,
            eventLoopGroup: eventLoopGroup)
    }

    /// The connections to `baseURL`'s origin, shared by everyone who asks for it. Providers ask
    /// once, at start, and keep it.
    public func endpoint(_ baseURL: String) throws(PushTransportError) -> PushEndpoint {
        let origin = try PushOrigin(url: baseURL)
        return endpoints.withLockedValue { endpoints in
            if let existing = endpoints[origin] { return existing }
            let endpoint = PushEndpoint(origin: origin, client: self)
            endpoints[origin] = endpoint
            return endpoint
        }
    }

    /// Closes every connection; requests not yet answered fail with ``PushTransportError/shutDown``.
    public func shutdown() async {
        isShutDown.withLockedValue { $0 = true }
        let all = endpoints.withLockedValue { Array($0.values) }
        for endpoint in all { await endpoint.shutdown() }
        await tokenClient.shutdown()
        await webPushClient.shutdown()
    }
}

/// Scheme, host and port: what one set of connections serves.
public struct PushOrigin: Hashable, Sendable, CustomStringConvertible {
    public var tls: Bool
    public var host: String
    public var port: Int

    /// `https://host[:port][/anything]`, or `http://` for HTTP/2 without TLS (prior knowledge).
    public init(url: String) throws(PushTransportError) {
        let tls: Bool
        var rest: Substring
        if url.hasPrefix("https://") {
            tls = true
            rest = url.dropFirst(8)
        } else if url.hasPrefix("http://") {
            tls = false
            rest = url.dropFirst(7)
        } else {
            throw .invalidURL(url)
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var host = rest
        var port = tls ? 443 : 80
        if rest.hasPrefix("[") {
            // An IPv6 literal: [::1]:port
            guard let close = rest.firstIndex(of: "]") else { throw .invalidURL(url) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { throw .invalidURL(url) }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { throw .invalidURL(url) }
            port = p
        }
        guard !host.isEmpty else { throw .invalidURL(url) }
        self.tls = tls
        self.host = String(host)
        self.port = port
    }

    /// The path and query of `url` (`""` for none), for requests to a base URL with a prefix.
    public static func path(of url: String) -> String {
        guard let scheme = url.range(of: "://") else { return "" }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return "" }
        let path = rest[slash...]
        return String(path.hasSuffix("/") ? path.dropLast() : path)
    }

    /// The `:authority` pseudo-header.
    var authority: String {
        let defaultPort = tls ? 443 : 80
        let name = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// SNI must be a name: NIOSSL checks an IP literal against the certificate's IP entries instead.
    var serverHostname: String? {
        host.allSatisfy({ $0.isNumber || $0 == "." }) || host.contains(":") ? nil : host
    }

    public var description: String { "\(tls ? "https" : "http")://\(authority)" }
}

/// One request: always a POST with a body, which is all that pushing needs.
public struct PushHTTPRequest: Sendable {
    /// Path and query, e.g. `/3/device/<token>`.
    public var path: String
    /// Regular headers only (lowercase names); the client adds the pseudo-headers. Use
    /// `.nonIndexable` for values that change per request (a device token, an expiry) so they
    /// do not churn the connection's HPACK table.
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    public init(path: String, headers: HPACKHeaders, body: ByteBuffer) {
        self.path = path
        self.headers = headers
        self.body = body
    }
}

public struct PushHTTPResponse: Sendable {
    public var status: Int
    /// Regular headers (no pseudo-headers).
    public var headers: HPACKHeaders
    public var body: ByteBuffer
}

/// Why a request got no answer. Each is worth a later attempt: none says the server refused
/// the push.
public enum PushTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL(String)
    /// No answer before the request's deadline.
    case timeout
    /// The connection closed with the request written and unanswered, more than once.
    case connectionClosed
    /// The server reset the stream (HTTP/2 error code).
    case streamReset(Int)
    /// The server kept answering GOAWAY before this request could be sent.
    case goAway
    /// TLS worked but the server does not speak HTTP/2 (`h2` not chosen by ALPN).
    case noHTTP2(negotiated: String?)
    /// The HTTPS proxy did not open a tunnel (its answer or the failure).
    case proxyRefused(String)
    /// The answer's body exceeded what any push service sends.
    case responseTooLarge
    case shutDown

    public var description: String {
        switch self {
        case .invalidURL(let url): "not an http(s) URL: \(url)"
        case .timeout: "no answer before the deadline"
        case .connectionClosed: "connection closed before an answer"
        case .streamReset(let code): "stream reset by the server (HTTP/2 error \(code))"
        case .goAway: "server kept closing connections (GOAWAY)"
        case .noHTTP2(let negotiated): "server did not negotiate h2 (ALPN: \(negotiated ?? "none"))"
        case .proxyRefused(let answer): "the HTTPS proxy did not open a tunnel: \(answer)"
        case .responseTooLarge: "response body too large"
        case .shutDown: "client shut down"
        }
    }
}
