import HeraldExecutors
import HeraldWire
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// The limits every connection lives under, whatever route it reaches.
public struct EdgeLimits: Sendable {
    /// A connection with no request under way for this long is closed (Hummingbird's idle timer).
    public var idleTimeout: Duration
    /// From a request's first byte to its last: a head or body that trickles in (slowloris) is
    /// cut off. Time spent answering, such as a relayed request held for the phone, is not counted.
    public var requestReadTimeout: Duration
    /// Open connections at most; past it a new one gets `503` and is closed.
    public var maxConnections: Int
    /// The request head's header fields, all together.
    public var maxHeaderBytes: Int

    public init(
        idleTimeout: Duration = .seconds(30),
        requestReadTimeout: Duration = .seconds(10),
        maxConnections: Int = 4_096,
        maxHeaderBytes: Int = 32 * 1024
    ) {
        self.idleTimeout = idleTimeout
        self.requestReadTimeout = requestReadTimeout
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Hummingbird's HTTP/1 server with these limits.
    func serverBuilder() -> HTTPServerBuilder {
        let limits = self
        let gate = ConnectionGate(limit: maxConnections)
        return HTTPServerBuilder { responder in
            LimitedHTTP1Channel(responder: responder, limits: limits, gate: gate)
        }
    }
}

/// The request was not read in full within ``EdgeLimits/requestReadTimeout``.
struct RequestReadTimeout: Error {}

/// Hummingbird's HTTP/1 channel behind a connection cap, with a read deadline per request and a
/// connection that is really closed once the server has said its last word on it.
struct LimitedHTTP1Channel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let http: HTTP1Channel.Value?
    }

    let responder: HTTPChannelHandler.Responder
    let limits: EdgeLimits
    let gate: ConnectionGate

    /// Hummingbird's channel for one connection, with that connection's handlers.
    func http1(deadline: RequestReadDeadline?) -> HTTP1Channel {
        HTTP1Channel(
            responder: responder,
            configuration: .init(
                // After the decoder and Hummingbird's codec: sees request parts.
                additionalChannelHandlers: deadline.map { [RequestPartsHandler(deadline: $0)] } ?? [],
                idleTimeout: TimeAmount(limits.idleTimeout),
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: limits.maxHeaderBytes,
                    maxHeaderListSize: limits.maxHeaderBytes,
                    maxHeaderFieldCount: 100
                )
            )
        )
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard gate.tryAcquire() else {
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefuseConnectionHandler())
                return Value(channel: channel, http: nil)
            }
        }
        let gate = self.gate
        channel.closeFuture.whenComplete { _ in gate.release() }
        let deadline = RequestReadDeadline(limit: TimeAmount(limits.requestReadTimeout))
        return channel.eventLoop.makeCompletedFuture {
            // First in the pipeline, before the HTTP decoder the base setup adds: the clock
            // starts at the first byte of a head, not once the head is whole.
            try channel.pipeline.syncOperations.addHandler(RequestBytesHandler(deadline: deadline))
        }.flatMap {
            http1(deadline: deadline).setup(channel: channel, logger: logger).map { Value(channel: channel, http: $0) }
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = value.http else { return }
        await withTaskExecutorPreference(IdleLoopExecutor.forLoop(value.channel.eventLoop)) {
            await http1(deadline: nil).handle(value: http, logger: logger)
        }
    }
}

/// Counts open connections against the cap.
final class ConnectionGate: Sendable {
    let limit: Int
    private let open = NIOLockedValueBox(0)

    init(limit: Int) { self.limit = limit }

    func tryAcquire() -> Bool {
        open.withLockedValue { open in
            guard open < limit else { return false }
            open += 1
            return true
        }
    }

    func release() { open.withLockedValue { $0 -= 1 } }
}

/// A connection over the cap: told `503` in plain HTTP/1.1 and closed, its input ignored.
final class RefuseConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    static let answer = #"{"error":"\#(ErrorCode.tooManyConnections.rawValue)","message":"the server is at its connection limit; retry later"}"#

    func channelActive(context: ChannelHandlerContext) {
        let response =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            + "Connection: close\r\nContent-Length: \(Self.answer.utf8.count)\r\n\r\n\(Self.answer)"
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: response)), promise: nil)
        context.close(mode: .output, promise: nil)
        // Let the client read the answer before the socket goes; then free it whatever it does.
        let bound = context.loopBound
        context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) { bound.value.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// The read clock of the request under way on one connection. Lives on the connection's event
/// loop: both handlers that touch it run there, so it needs no lock.
///
/// One timer per connection, not per request: a request notes when its first byte came, and a
/// timer that fires while a younger request is under way is set again for that one's deadline.
/// A keep-alive connection serving requests back to back so schedules one timer per `limit`,
/// where scheduling and cancelling one per request was about 6,700 instructions a webhook.
final class RequestReadDeadline: @unchecked Sendable {
    let limit: TimeAmount
    private var timer: Scheduled<Void>?
    /// When the request under way began; nil between requests.
    private var startedAt: NIODeadline?
    /// The parts handler's context once the request's head has been decoded.
    private var partsContext: ChannelHandlerContext?

    init(limit: TimeAmount) { self.limit = limit }

    /// Starts the clock unless a request is already being read.
    func start(on context: ChannelHandlerContext) {
        guard startedAt == nil else { return }
        let now = NIODeadline.now()
        startedAt = now
        if timer == nil { schedule(at: now + limit, bytesContext: context) }
    }

    func headDecoded(_ context: ChannelHandlerContext) {
        start(on: context)
        partsContext = context
    }

    /// The request's last byte arrived. The timer stays: the next request will likely use it.
    func stop() {
        startedAt = nil
        partsContext = nil
    }

    /// The connection is done with: no timer may outlive it.
    func cancel() {
        stop()
        timer?.cancel()
        timer = nil
    }

    private func schedule(at deadline: NIODeadline, bytesContext: ChannelHandlerContext) {
        let bound = bytesContext.loopBound
        timer = bytesContext.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            fired(bytesContext: bound.value)
        }
    }

    private func fired(bytesContext: ChannelHandlerContext) {
        timer = nil
        guard let startedAt else { return }
        let deadline = startedAt + limit
        if deadline > .now() {
            schedule(at: deadline, bytesContext: bytesContext)
            return
        }
        self.startedAt = nil
        if let partsContext {
            // A body too slow: the route's body read throws, it answers 408, and Hummingbird
            // closes the connection after that answer.
            partsContext.fireErrorCaught(RequestReadTimeout())
            self.partsContext = nil
        } else {
            // A head too slow: there is nobody to answer yet.
            bytesContext.close(promise: nil)
        }
    }
}

/// Starts the read clock at a request's first byte.
final class RequestBytesHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let deadline: RequestReadDeadline

    init(deadline: RequestReadDeadline) { self.deadline = deadline }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadline.start(on: context)
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) { deadline.cancel() }
}

/// Stops the read clock at a request's end, and closes a connection the server has finished
/// with.
///
/// Hummingbird ends a connection (after a `Connection: close` answer, a malformed head, a read
/// error) by shutting down only its output and waiting for the client's FIN. When the client
/// sends none, or NIO has stopped reading because the input was bad (a 1 MB header fills the
/// receive buffer), that FIN never arrives and the socket stays open for good: 113 sockets after
/// 200 oversized heads, measured. A short linger lets the client read the answer first.
final class RequestPartsHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    static let linger: TimeAmount = .seconds(2)
    let deadline: RequestReadDeadline
    private var closeTimer: Scheduled<Void>?

    init(deadline: RequestReadDeadline) { self.deadline = deadline }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: deadline.headDecoded(context)
        case .body: break
        case .end: deadline.stop()
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.outputClosed = event, closeTimer == nil {
            let bound = context.loopBound
            closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.linger) { bound.value.close(promise: nil) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closeTimer?.cancel()
        closeTimer = nil
        deadline.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closeTimer?.cancel()
        closeTimer = nil
    }
}
