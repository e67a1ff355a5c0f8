import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// An APNs-shaped HTTP/2 + TLS server whose *connection* behaviour a test scripts: what a real
/// connection to Apple does now and then, on demand.
///
/// It answers every `POST` with `200` and an `apns-id` once the body is read, like the APNs
/// look-alike, but checks no tokens: it exists to test the transport. Per connection (numbered
/// from 1 in order of arrival) it can announce a stream limit, send GOAWAY after some requests,
/// drop the TCP connection with requests unanswered, or lower its stream limit mid-connection.
/// It records which requests it *processed* (answered), so a test can prove every request was
/// handled exactly once.
public final class ScriptedHTTP2Server: Sendable {
    public struct Script: Sendable {
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` announced at the start of every connection.
        public var maxConcurrentStreams = 100
        /// Hold every answer this long, so streams overlap.
        public var responseDelay: Duration?
        /// On connection 1, after this many requests: GOAWAY naming the last of them as the
        /// last processed stream; later streams on it are neither processed nor answered.
        public var goAwayAfter: Int?
        /// On connection 1, after this many requests: close the TCP connection, answering none.
        public var dropAfter: Int?
        /// On connection 1, after this many requests: announce this lower stream limit.
        public var lowerStreamLimit: (afterRequests: Int, to: Int)?

        public init() {}
    }

    public struct Observations: Sendable {
        /// Connections accepted.
        public var connections = 0
        /// Paths of the requests answered, in order (each is a processed request).
        public var processed: [String] = []
        /// Requests received per connection, by connection number.
        public var received: [Int: Int] = [:]
        /// PING frames received (keep-alive).
        public var pings = 0
        /// The most streams open at once on one connection.
        public var maxOpenStreams = 0
        /// Once the client acknowledged a lowered limit: the most streams open when it opened one.
        public var maxOpenAfterLowering = 0
    }

    let script: Script
    let certificate: TestCertificate
    let observations = NIOLockedValueBox(Observations())
    private let channel: NIOLockedValueBox<(any Channel)?> = NIOLockedValueBox(nil)

    public init(script: Script, certificate: TestCertificate) {
        self.script = script
        self.certificate = certificate
    }

    public var observed: Observations { observations.withLockedValue { $0 } }

    /// Listens on 127.0.0.1 (a free port) and returns `https://127.0.0.1:<port>`.
    public func start() async throws -> String {
        var tls = try certificate.serverTLSConfiguration()
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let server = self
        let bound = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = server.observations.withLockedValue { o in
                        o.connections += 1
                        return o.connections
                    }
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: context))
                    try pipeline.addHandler(
                        NIOHTTP2Handler(
                            mode: .server,
                            initialSettings: [
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: server.script.maxConcurrentStreams),
                                HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
                            ]
                        )
                    )
                    try pipeline.addHandler(ConnectionHandler(server: server, number: number))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        channel.withLockedValue { $0 = bound }
        return "https://127.0.0.1:\(bound.localAddress?.port ?? 0)"
    }

    public func stop() async {
        let bound = channel.withLockedValue { $0 }
        try? await bound?.close()
    }

    /// One connection's streams, handled on its event loop.
    private final class ConnectionHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        let server: ScriptedHTTP2Server
        let number: Int
        var requests = 0
        var open: [HTTP2StreamID: String] = [:]
        /// Open streams whose body is complete (answered or about to be).
        var complete: Set<HTTP2StreamID> = []
        var goneAway = false
        var lastProcessed = HTTP2StreamID.maxID
        var dropped = false
        var loweredTo: Int?
        var loweringAcknowledged = false

        init(server: ScriptedHTTP2Server, number: Int) {
            self.server = server
            self.number = number
        }

        var script: Script { server.script }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.payload {
            case .headers(let headers):
                // After GOAWAY, streams above its last_stream_id are ignored, never processed.
                guard frame.streamID <= lastProcessed else { return }
                let path = headers.headers.first(name: ":path") ?? ""
                open[frame.streamID] = path
                let count = open.count
                let lowered = loweredTo != nil && loweringAcknowledged
                server.observations.withLockedValue { o in
                    o.maxOpenStreams = max(o.maxOpenStreams, count)
                    if lowered { o.maxOpenAfterLowering = max(o.maxOpenAfterLowering, count) }
                }
                if headers.endStream { requestComplete(frame.streamID, context: context) }
            case .data(let data):
                if data.endStream { requestComplete(frame.streamID, context: context) }
            case .settings(.ack):
                if loweredTo != nil { loweringAcknowledged = true }
            case .ping(_, ack: false):
                server.observations.withLockedValue { $0.pings += 1 }
            case .rstStream:
                open[frame.streamID] = nil
                complete.remove(frame.streamID)
            default:
                break
            }
        }

        private func requestComplete(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
            guard !dropped, let path = open[id], !complete.contains(id) else { return }
            complete.insert(id)
            requests += 1
            let requests = self.requests
            server.observations.withLockedValue { $0.received[number, default: 0] += 1 }

            if number == 1, let dropAfter = script.dropAfter, requests >= dropAfter {
                dropped = true
                context.close(promise: nil)
                return
            }
            if number == 1, let lower = script.lowerStreamLimit, requests == lower.afterRequests {
                loweredTo = lower.to
                context.writeAndFlush(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: .rootStream,
                            payload: .settings(
                                .settings([
                                    HTTP2Setting(parameter: .maxConcurrentStreams, value: lower.to)
                                ])))),
                    promise: nil
                )
            }
            if number == 1, let goAwayAfter = script.goAwayAfter, requests == goAwayAfter {
                goneAway = true
                lastProcessed = id
                // Streams above `id` are not processed: drop what is open above it.
                for (open, _) in self.open where open > id { self.open[open] = nil }
                context.writeAndFlush(
                    wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: id, errorCode: .noError, opaqueData: nil))),
                    promise: nil
                )
                // Bodies arrive in any order (flow control), and NIOHTTP2 stops reading at the
                // first frame for a stream its GOAWAY dropped; so every stream up to `id` counts
                // as processed now, as a server that had read them all would have it.
                for (other, _) in self.open where other < id && !complete.contains(other) {
                    requestComplete(other, context: context)
                }
            }
            if let delay = script.responseDelay {
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
                    let (handler, context) = loopBound.value
                    handler.answer(id, path: path, context: context)
                }
            } else {
                answer(id, path: path, context: context)
            }
        }

        private func answer(_ id: HTTP2StreamID, path: String, context: ChannelHandlerContext) {
            guard !dropped, context.channel.isActive, open.removeValue(forKey: id) != nil else { return }
            complete.remove(id)
            server.observations.withLockedValue { $0.processed.append(path) }
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: "200")
            headers.add(name: "apns-id", value: UUID().uuidString)
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))),
                promise: nil
            )
        }

        func channelInactive(context: ChannelHandlerContext) {
            open.removeAll()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // Stream errors (a stream the client reset) are not the connection's end.
            if error is NIOHTTP2Errors.StreamError { return }
            // After its GOAWAY, NIOHTTP2 calls frames for the streams it dropped a connection
            // error; a server (APNs included) ignores them, as RFC 9113 §6.8 asks.
            if goneAway { return }
            context.close(promise: nil)
        }
    }
}
