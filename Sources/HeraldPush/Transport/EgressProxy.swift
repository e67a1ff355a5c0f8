import Foundation
import NIOCore
import NIOExtras
import NIOHTTP1

/// The HTTPS proxy outgoing connections go through, as deployments name it:
/// `HERALD_HTTPS_PROXY`, else `HTTPS_PROXY` / `https_proxy`, with `NO_PROXY` / `no_proxy`
/// naming the hosts reached directly. Every push service, Google's token endpoint and every Web
/// Push endpoint is reached through an HTTP `CONNECT` tunnel, TLS running end to end inside it.
public struct EgressProxy: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// `user:password` from the proxy URL, sent as `Proxy-Authorization: Basic`; never logged.
    public var credentials: String?
    /// Hosts reached directly: a name matches itself and its subdomains (`.example.com` or
    /// `example.com`), `*` matches every host.
    public var bypass: [String]

    public init(host: String, port: Int, credentials: String? = nil, bypass: [String] = []) {
        self.host = host
        self.port = port
        self.credentials = credentials
        self.bypass = bypass
    }

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// The variables read, first found wins.
    public static let variables = ["HERALD_HTTPS_PROXY", "HTTPS_PROXY", "https_proxy"]
    public static let bypassVariables = ["NO_PROXY", "no_proxy"]

    /// The proxy `environment` names, or nil for none. A value that is not an `http://` URL with
    /// a host is an error naming its variable (without its credentials).
    public static func from(environment: [String: String]) throws(Invalid) -> EgressProxy? {
        guard
            let (variable, text) = variables.lazy.compactMap({ name in
                environment[name].map { (name, $0.trimmingCharacters(in: .whitespaces)) }
            }).first(where: { !$0.1.isEmpty })
        else { return nil }
        // "host:port" without a scheme is common in the wild and means http://.
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URLComponents(string: withScheme), let host = url.host, !host.isEmpty else {
            throw Invalid(description: "\(variable) must be a proxy URL such as http://proxy.example:3128")
        }
        guard url.scheme?.lowercased() == "http" else {
            throw Invalid(description: "\(variable): only an http:// proxy is supported (TLS runs inside its CONNECT tunnel)")
        }
        let credentials = url.user.map { user in
            (user.removingPercentEncoding ?? user) + ":" + ((url.password?.removingPercentEncoding ?? url.password) ?? "")
        }
        let bypass =
            bypassVariables.lazy.compactMap { environment[$0] }.first.map { list in
                list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            } ?? []
        return EgressProxy(host: host, port: url.port ?? 80, credentials: credentials, bypass: bypass)
    }

    /// Whether a connection to `host` goes through the proxy (`NO_PROXY` does not name it).
    public func applies(to host: String) -> Bool {
        let host = host.lowercased()
        for entry in bypass {
            if entry == "*" { return false }
            // An entry may carry a port ("example.com:8443"); the host part decides.
            let name = entry.split(separator: ":").first.map(String.init) ?? entry
            let bare = name.hasPrefix(".") ? String(name.dropFirst()) : name
            if host == bare || host.hasSuffix("." + bare) { return false }
        }
        return true
    }

    /// The `Proxy-Authorization` header's value, when the URL carried credentials.
    var authorization: String? {
        credentials.map { "Basic " + Data($0.utf8).base64EncodedString() }
    }

    /// Where it is, without its credentials: safe for logs and `herald config check`.
    public var description: String {
        "http://\(credentials == nil ? "" : "…@")\(host):\(port)"
    }
}

extension EgressProxy {
    /// On a channel just connected to the proxy (from its initializer, on its event loop):
    /// `CONNECT host:port`, with the credentials. The future succeeds once the tunnel is open and
    /// its HTTP/1 codec has left the pipeline, so TLS can go in next (the decoder, still reading,
    /// would take TLS's first write for an HTTP request); it fails with the proxy's own words
    /// (407, 502 …).
    func openTunnel(on channel: any Channel, to host: String, port: Int, deadline: NIODeadline) throws -> EventLoopFuture<Void> {
        let tunnel = channel.eventLoop.makePromise(of: Void.self)
        let encoder = HTTPRequestEncoder()
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let connect = NIOHTTP1ProxyConnectHandler(
            targetHost: host, targetPort: port, headers: HTTPHeaders(authorization.map { [("Proxy-Authorization", $0)] } ?? []),
            deadline: deadline, promise: tunnel)
        try channel.pipeline.syncOperations.addHandlers([encoder, decoder, connect])
        // The CONNECT handler leaves by itself once the proxy answers 200; the codec follows.
        return tunnel.futureResult.assumeIsolated().flatMap {
            let pipeline = channel.pipeline.syncOperations
            let removed = (0..<2).map { _ in channel.eventLoop.makePromise(of: Void.self) }
            pipeline.removeHandler(decoder, promise: removed[0])
            pipeline.removeHandler(encoder, promise: removed[1])
            return EventLoopFuture.andAllSucceed(removed.map(\.futureResult), on: channel.eventLoop)
        }.nonisolated()
    }
}
