import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus who sent the request.
public struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket's peer: behind a reverse proxy, the proxy. Read only by
    /// ``ClientAddressMiddleware``; every rule reads ``clientAddress``.
    public let remoteAddress: SocketAddress?
    /// The client's IP address as text (``ClientAddressResolver``), or `unknown` (in-process
    /// tests have none): what registration limits, held requests per client and logs key on.
    var clientAddress = "unknown"
    /// `https` or `http` as a trusted proxy reported the client's scheme; nil when none did.
    var forwardedScheme: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
