import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket to a Nostr relay (RFC 6455 over NIO): TLS for `wss://`, sending SNI only for a
/// host name (RFC 6066 forbids an IP literal there; the certificate is then checked against the
/// address), directly or inside the HTTPS proxy's `CONNECT` tunnel.
///
/// Herald's own rather than WSClient's, which puts any host, an IP literal included, in SNI:
/// NIOSSL refuses that (`cannotUseIPAddressInSNI`) and a relay named by its address was never
/// reached.
struct RelayWebSocket {
    /// Messages over this are a relay's mistake, not a reason to buffer.
    static let maxMessageBytes = 64 * 1024

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Connects and upgrades, then runs `exchange` with a way to send text and the text messages
    /// that arrive (``RelayMessages``); closes when it returns.
    ///
    /// - Parameter address: Where to connect, already resolved and checked; nil resolves the host.
    static func run(
        url: String, address: SocketAddress? = nil, tlsContext: NIOSSLContext, proxy: EgressProxy?, group: any EventLoopGroup,
        connectTimeout: TimeAmount,
        _ exchange:
            @Sendable (_ send: @Sendable (String) async throws -> Void, _ messages: RelayMessages) async throws -> Void
    ) async throws {
        let upgrade = try await connect(
            url: url, address: address, tlsContext: tlsContext, proxy: proxy, group: group, connectTimeout: connectTimeout
        ) { channel, origin, path, tls in
            try upgradePipeline(channel, origin: origin, path: path, tls: tls, timeout: connectTimeout)
        }
        guard case .websocket(let socket) = try await upgrade.get() else {
            throw Failure(description: "the relay did not upgrade to a WebSocket")
        }
        try await socket.executeThenClose { inbound, outbound in
            let send: @Sendable (String) async throws -> Void = { text in
                try await outbound.write(frame(.text, ByteBuffer(string: text)))
            }
            try await exchange(send, RelayMessages(inbound: inbound, outbound: outbound))
            // A close frame, as a well-behaved client leaves; the channel closes after it.
            try? await outbound.write(frame(.connectionClose, ByteBuffer(bytes: [0x03, 0xE8])))
        }
    }

    /// Opens a connection to the relay's origin (through the proxy's tunnel when it applies, to
    /// `address` when given) and sets up its pipeline with `pipeline`, which is handed the
    /// origin, the request target and the TLS context for `wss://`.
    static func connect<Result: Sendable>(
        url: String, address: SocketAddress?, tlsContext: NIOSSLContext, proxy: EgressProxy?, group: any EventLoopGroup,
        connectTimeout: TimeAmount,
        pipeline: @escaping @Sendable (any Channel, PushOrigin, String, NIOSSLContext?) throws -> EventLoopFuture<Result>
    ) async throws -> EventLoopFuture<Result> {
        let (origin, path) = try parse(url)
        let tls = origin.tls ? tlsContext : nil
        let bootstrap = ClientBootstrap(group: group).connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        if let proxy, proxy.applies(to: origin.host) {
            return try await bootstrap.connect(host: proxy.host, port: proxy.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try proxy.openTunnel(on: channel, to: origin.host, port: origin.port, deadline: .now() + connectTimeout)
                        .flatMapThrowing { try pipeline(channel, origin, path, tls) }
                        .flatMap { $0 }
                }
            }
        }
        let initializer: @Sendable (any Channel) -> EventLoopFuture<EventLoopFuture<Result>> = { channel in
            channel.eventLoop.makeCompletedFuture { try pipeline(channel, origin, path, tls) }
        }
        if let address {
            return try await bootstrap.connect(to: address, channelInitializer: initializer)
        }
        return try await bootstrap.connect(host: origin.host, port: origin.port, channelInitializer: initializer)
    }

    /// Client frames are masked (RFC 6455 §5.3).
    static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }

    /// TLS (SNI only for a name), then HTTP/1.1 with the WebSocket upgrade request. A relay that
    /// accepts the connection and then stalls the handshake or the upgrade is closed after
    /// `timeout`, as one that does not accept it is.
    static func upgradePipeline(
        _ channel: any Channel, origin: PushOrigin, path: String, tls: NIOSSLContext?, timeout: TimeAmount
    ) throws -> EventLoopFuture<Upgrade> {
        let upgraded = try pipeline(channel, origin: origin, path: path, tls: tls)
        let stalled = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        upgraded.whenComplete { _ in stalled.cancel() }
        return upgraded
    }

    private static func pipeline(
        _ channel: any Channel, origin: PushOrigin, path: String, tls: NIOSSLContext?
    ) throws -> EventLoopFuture<Upgrade> {
        if let tls {
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: origin.serverHostname))
        }
        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxMessageBytes) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: origin.authority)
        headers.add(name: "Content-Length", value: "0")
        let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
            upgraders: [upgrader],
            // Nothing more to say on a connection that did not upgrade: closed, not left open.
            notUpgradingCompletionHandler: { channel in channel.close().map { .refused } }
        )
        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
            configuration: NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration))
    }

    /// `wss://host[:port][/path]` as an origin (443 by default) and the request target.
    static func parse(_ url: String) throws -> (PushOrigin, String) {
        let secure = url.hasPrefix("wss://")
        guard secure || url.hasPrefix("ws://") else { throw Failure(description: "a relay URL is ws:// or wss://") }
        let rest = url.dropFirst(secure ? 6 : 5)
        let origin = try PushOrigin(url: (secure ? "https://" : "http://") + rest)
        let path = rest.firstIndex(where: { $0 == "/" || $0 == "?" }).map { String(rest[$0...]) } ?? "/"
        return (origin, path.hasPrefix("?") ? "/" + path : path)
    }
}

/// A relay's text messages, read as they are asked for: nothing is read from the socket ahead of
/// the reader beyond NIO's small window, so a relay sending faster than Herald handles its
/// events is held back by TCP, not buffered in memory (a flooding relay once grew the process
/// from 51 to 305 MB). Pings are answered and fragments joined as messages are read; a message
/// over ``RelayWebSocket/maxMessageBytes`` ends the connection.
struct RelayMessages: AsyncSequence {
    typealias Element = String
    let inbound: NIOAsyncChannelInboundStream<WebSocketFrame>
    let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

    struct AsyncIterator: AsyncIteratorProtocol {
        var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
        var message = ByteBuffer()

        mutating func next() async throws -> String? {
            while let received = try await frames.next() {
                switch received.opcode {
                case .text, .continuation:
                    var data = received.unmaskedData
                    guard message.readableBytes + data.readableBytes <= RelayWebSocket.maxMessageBytes else {
                        throw RelayWebSocket.Failure(description: "a relay message over \(RelayWebSocket.maxMessageBytes) bytes")
                    }
                    message.writeBuffer(&data)
                    if received.fin {
                        defer { message.clear() }
                        return String(buffer: message)
                    }
                case .ping:
                    try await outbound.write(RelayWebSocket.frame(.pong, received.unmaskedData))
                case .connectionClose:
                    return nil
                default:
                    continue
                }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(frames: inbound.makeAsyncIterator(), outbound: outbound)
    }
}
