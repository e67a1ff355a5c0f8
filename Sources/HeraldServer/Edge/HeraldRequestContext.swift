import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the client's address, which the
/// registration rate limit keys on.
public struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text, or `unknown` (in-process tests have none).
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
