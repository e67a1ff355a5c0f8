import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus who sent the request.
public struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket's peer: behind a reverse proxy, the proxy. Read only by
    /// ``ClientAddressMiddleware``; every rule reads ``clientAddress``.
    public let remoteAddress: SocketAddress?
    /// The client's address as ``ClientAddressResolver`` found it; nil in in-process tests.
    var client: IPAddress?
    /// The client's IP address as text, or `unknown`: what registration limits and held requests
    /// per client key on. Written out only by the routes that ask, not for every webhook.
    var clientAddress: String { client?.description ?? "unknown" }
    /// `https` or `http` as a trusted proxy reported the client's scheme; nil when none did.
    var forwardedScheme: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
