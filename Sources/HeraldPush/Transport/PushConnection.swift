import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// One HTTP/2 connection and the handler that runs its streams.
///
/// Sits after `NIOHTTP2Handler` (no stream multiplexer: a stream here is two frames out and a
/// dictionary entry, not a child channel). Requests arrive from any thread through a locked
/// inbox; the first one into an empty inbox schedules a single drain on the event loop, so
/// requests that arrive while the loop is busy are written together and flushed once.
///
/// Streams start only after the server's SETTINGS (so its stream limit is known) and never
/// beyond `min(SETTINGS_MAX_CONCURRENT_STREAMS, maxStreamsPerConnection)`; a lowered limit
/// takes effect as streams finish. On GOAWAY the requests above `last_stream_id` (which the
/// server promises it did not process) and all not yet written go back to the endpoint at once.
/// When the connection dies, written requests go back too, once; a second loss fails them.
///
/// `@unchecked Sendable`: `inbox` is locked; every other stored property is touched on
/// `eventLoop` only.
final class PushConnection: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Inbox {
        var items: [Submission] = []
        var drainScheduled = false
        var closed = false
    }

    private struct Stream {
        var submission: Submission
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    private enum Phase {
        /// Connecting, TLS, waiting for the server's SETTINGS.
        case starting
        /// Streams may start.
        case ready
        /// GOAWAY received or stream ids exhausted: finishing what was written, then closing.
        case draining
        case closed
    }

    /// The largest answer body accepted; APNs and FCM errors are a few hundred bytes.
    static let maxResponseBody = 64 * 1024

    let eventLoop: any EventLoop
    private let origin: PushOrigin
    private let configuration: PushHTTPClient.Configuration
    private let logger: Logger
    private let inbox = NIOLockedValueBox(Inbox())

    // Event loop only.
    private var events: ConnectionEvents?
    private var context: ChannelHandlerContext?
    private var channel: (any Channel)?
    private var phase = Phase.starting
    private var everReady = false
    private var queue = CircularBuffer<Submission>(initialCapacity: 64)
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamNumber: Int32 = 1
    private var maxConcurrentStreams = 100
    private var needsFlush = false
    private var startedAt = NIODeadline.now()
    private var readSinceSweep = false
    private var lastRead = NIODeadline.now()
    private var pingSentAt: NIODeadline?
    private var sweep: RepeatedTask?
    private var failure: (any Error)?
    private let pseudoHeaders: HPACKHeaders

    init(origin: PushOrigin, configuration: PushHTTPClient.Configuration, eventLoop: any EventLoop, logger: Logger) {
        self.origin = origin
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.logger = logger
        var pseudo = HPACKHeaders()
        pseudo.add(name: ":method", value: "POST")
        pseudo.add(name: ":scheme", value: origin.tls ? "https" : "http")
        pseudo.add(name: ":authority", value: origin.authority)
        self.pseudoHeaders = pseudo
    }

    // MARK: Any thread

    /// Queues a request; false when this connection no longer takes any (pick another).
    func submit(_ submission: Submission) -> Bool {
        let schedule: Bool? = inbox.withLockedValue { inbox in
            guard !inbox.closed else { return nil }
            inbox.items.append(submission)
            if inbox.drainScheduled { return false }
            inbox.drainScheduled = true
            return true
        }
        guard let schedule else { return false }
        if schedule {
            eventLoop.execute { self.drainInbox() }
        }
        return true
    }

    /// Opens the connection after `delay` (backoff after failed connects).
    func start(tlsContext: NIOSSLContext?, delay: TimeAmount, events: ConnectionEvents) {
        eventLoop.execute {
            self.events = events
            self.startedAt = .now()
            let interval = TimeAmount(self.configuration.sweepInterval)
            self.sweep = self.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                self.sweepTick()
            }
            if delay > .zero {
                self.eventLoop.scheduleTask(in: delay) { self.connect(tlsContext: tlsContext) }
            } else {
                self.connect(tlsContext: tlsContext)
            }
        }
    }

    /// Fails what is outstanding with `shutDown` and closes.
    func shutdown() async {
        let closed: EventLoopFuture<Void> = eventLoop.flatSubmit {
            self.failure = PushTransportError.shutDown
            self.retire(failingEverything: PushTransportError.shutDown)
            guard let channel = self.channel else { return self.eventLoop.makeSucceededVoidFuture() }
            channel.close(promise: nil)
            return channel.closeFuture
        }
        try? await closed.get()
    }

    // MARK: Connecting

    private func connect(tlsContext: NIOSSLContext?) {
        guard phase == .starting else { return }
        let origin = self.origin
        let settings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
        ]
        // TLS (when the origin has it), HTTP/2 and this handler: right on the socket, or inside
        // the proxy's tunnel once it is open.
        let addProtocolHandlers: @Sendable (any Channel) throws -> Void = { channel in
            let pipeline = channel.pipeline.syncOperations
            if let tlsContext {
                try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: origin.serverHostname))
            }
            try pipeline.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: settings))
            try pipeline.addHandler(self)
        }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let connected: EventLoopFuture<Void>
        if let proxy = configuration.proxy, proxy.applies(to: origin.host) {
            let deadline = NIODeadline.now() + TimeAmount(configuration.connectTimeout)
            // Made by the initializer, which always runs before `connect` succeeds; its promises
            // are the pipeline's to complete, so none is left unfulfilled whatever happens.
            let setUp = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
            connected = bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // TLS and HTTP/2 go in once the tunnel is open and its codec has left.
                    let done = try proxy.openTunnel(on: channel, to: origin.host, port: origin.port, deadline: deadline)
                        .flatMapThrowing { try addProtocolHandlers(channel) }
                    setUp.withLockedValue { $0 = done }
                }
            }
            .connect(host: proxy.host, port: proxy.port)
            .flatMap { channel in
                let done = setUp.withLockedValue { $0 } ?? channel.eventLoop.makeFailedFuture(PushTransportError.connectionClosed)
                return done.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    // The proxy's own words (407, 502 …) say more than a closed connection.
                    throw PushTransportError.proxyRefused("\(error)")
                }
            }
        } else {
            connected = bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try addProtocolHandlers(channel) }
            }
            .connect(host: origin.host, port: origin.port).map { _ in }
        }
        connected.whenFailure { error in
            self.failure = self.failure ?? error
            self.retire(failingEverything: error)
        }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.channel = context.channel
        if phase == .closed {
            // Shut down while connecting.
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionLost()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event, negotiated != "h2" {
            failure = PushTransportError.noHTTP2(negotiated: negotiated)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            if let stream = streams.removeValue(forKey: streamError.streamID) {
                stream.submission.answer.resume(throwing: streamError.baseError)
                streamFinished()
            }
            return
        }
        logger.debug(
            "push connection error",
            metadata: ["push.origin": "\(origin)", "error.type": "\(String(reflecting: type(of: error)))", "error": "\(error)"]
        )
        failure = failure ?? error
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard var stream = streams[frame.streamID] else { return }
            if stream.status == nil {
                guard let status = headers.headers.first(name: ":status").flatMap(Int.init) else {
                    fail(frame.streamID, with: .streamReset(HTTP2ErrorCode.protocolError.networkCode), reset: .protocolError)
                    return
                }
                // 1xx is informational: the real answer follows.
                if status >= 200 {
                    stream.status = status
                    stream.headers = headers.headers
                }
            } else {
                stream.headers.add(contentsOf: headers.headers)  // trailers
            }
            streams[frame.streamID] = stream
            if headers.endStream { complete(frame.streamID) }

        case .data(let data):
            guard var stream = streams[frame.streamID] else { return }
            if case .byteBuffer(var bytes) = data.data, bytes.readableBytes > 0 {
                if (stream.body?.readableBytes ?? 0) + bytes.readableBytes > Self.maxResponseBody {
                    fail(frame.streamID, with: .responseTooLarge, reset: .cancel)
                    return
                }
                if stream.body == nil {
                    stream.body = bytes
                } else {
                    stream.body!.writeBuffer(&bytes)
                }
                streams[frame.streamID] = stream
            }
            if data.endStream { complete(frame.streamID) }

        case .rstStream(let code):
            guard var stream = streams.removeValue(forKey: frame.streamID) else { return }
            if code == .refusedStream && stream.submission.refusals < 10 {
                // Not processed, by definition: try again, first in line.
                stream.submission.refusals += 1
                queue.prepend(stream.submission)
            } else {
                stream.submission.answer.resume(throwing: PushTransportError.streamReset(code.networkCode))
            }
            streamFinished()

        case .settings(.settings(let settings)):
            for setting in settings where setting.parameter == .maxConcurrentStreams {
                maxConcurrentStreams = min(setting.value, configuration.maxStreamsPerConnection)
            }
            if phase == .starting {
                phase = .ready
                everReady = true
                events?.ready()
            }
            startStreams()

        case .goAway(let lastStreamID, _, _):
            drain(lastProcessed: lastStreamID)

        case .ping(_, ack: true):
            pingSentAt = nil

        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Any bytes prove the connection alive; NIOHTTP2 keeps PING acks to itself.
        readSinceSweep = true
        flushIfNeeded()
        context.fireChannelReadComplete()
    }

    // MARK: Streams

    private func drainInbox() {
        let items = inbox.withLockedValue { inbox in
            inbox.drainScheduled = false
            defer { inbox.items.removeAll(keepingCapacity: true) }
            return inbox.items
        }
        switch phase {
        case .starting, .ready:
            queue.append(contentsOf: items)
            startStreams()
            flushIfNeeded()
        case .draining:
            // Raced with a GOAWAY: these were never written.
            if !items.isEmpty { events?.retired(self, false, items) }
        case .closed:
            release(items, failed: !everReady)
        }
    }

    private func startStreams() {
        guard phase == .ready, let context, !queue.isEmpty else { return }
        var now: NIODeadline?
        while streams.count < maxConcurrentStreams, let submission = queue.popFirst() {
            let current = now ?? .now()
            now = current
            if submission.deadline < current {
                submission.answer.resume(throwing: PushTransportError.timeout)
                continue
            }
            // Stream ids are 31 bits; a connection that used them up is replaced.
            guard nextStreamNumber < Int32.max - 2 else {
                queue.prepend(submission)
                drain(lastProcessed: .maxID)
                return
            }
            let id = HTTP2StreamID(nextStreamNumber)
            nextStreamNumber += 2
            var headers = pseudoHeaders
            headers.reserveCapacity(4 + submission.request.headers.count)
            headers.add(name: ":path", value: submission.request.path, indexing: .nonIndexable)
            headers.add(contentsOf: submission.request.headers)
            streams[id] = Stream(submission: submission)
            let body = submission.request.body
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: body.readableBytes == 0)))),
                promise: nil
            )
            if body.readableBytes > 0 {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
                    promise: nil
                )
            }
            needsFlush = true
        }
    }

    private func complete(_ id: HTTP2StreamID) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        guard let status = stream.status else {
            stream.submission.answer.resume(throwing: PushTransportError.streamReset(HTTP2ErrorCode.protocolError.networkCode))
            streamFinished()
            return
        }
        stream.submission.answer.resume(
            returning: PushHTTPResponse(status: status, headers: stream.headers, body: stream.body ?? ByteBuffer())
        )
        streamFinished()
    }

    private func fail(_ id: HTTP2StreamID, with error: PushTransportError, reset: HTTP2ErrorCode) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        context?.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(reset))), promise: nil)
        needsFlush = true
        stream.submission.answer.resume(throwing: error)
        streamFinished()
    }

    private func streamFinished() {
        if phase == .draining {
            if streams.isEmpty { context?.close(promise: nil) }
        } else {
            startStreams()
        }
    }

    private func flushIfNeeded() {
        guard needsFlush, let context else { return }
        needsFlush = false
        context.flush()
    }

    // MARK: Retiring

    /// Stops taking requests; hands back everything the server did not process.
    private func drain(lastProcessed: HTTP2StreamID) {
        guard phase == .starting || phase == .ready else { return }
        phase = .draining
        var orphans = closeInbox()
        orphans.append(contentsOf: queue)
        queue.removeAll()
        for (id, stream) in streams where id > lastProcessed {
            streams[id] = nil
            var submission = stream.submission
            submission.refusals += 1
            orphans.append(submission)
        }
        release(orphans, failed: false)
        if streams.isEmpty { context?.close(promise: nil) }
    }

    private func connectionLost() {
        guard phase != .closed else { return }
        let wasReady = everReady
        phase = .closed
        sweep?.cancel()
        var orphans = closeInbox()
        orphans.append(contentsOf: queue)
        queue.removeAll()
        for (_, stream) in streams {
            var submission = stream.submission
            submission.unansweredAttempts += 1
            if submission.unansweredAttempts > 1 {
                submission.answer.resume(throwing: PushTransportError.connectionClosed)
            } else {
                orphans.append(submission)
            }
        }
        streams.removeAll()
        if wasReady {
            release(orphans, failed: false)
        } else {
            // Never worked (refused, TLS, no h2): fail what waited; the outbox retries later.
            release(orphans, failed: true)
        }
    }

    private func retire(failingEverything error: any Error) {
        guard phase != .closed else { return }
        phase = .closed
        sweep?.cancel()
        var all = closeInbox()
        all.append(contentsOf: queue)
        queue.removeAll()
        for (_, stream) in streams { all.append(stream.submission) }
        streams.removeAll()
        for submission in all { submission.answer.resume(throwing: error) }
        events?.retired(self, !everReady, [])
    }

    /// Gives `orphans` back to the endpoint, or fails them when this connection never worked.
    private func release(_ orphans: [Submission], failed: Bool) {
        if failed {
            let error = failure ?? PushTransportError.connectionClosed
            for orphan in orphans { orphan.answer.resume(throwing: error) }
            events?.retired(self, true, [])
        } else {
            var sendable: [Submission] = []
            for orphan in orphans {
                if orphan.refusals > 10 {
                    orphan.answer.resume(throwing: PushTransportError.goAway)
                } else {
                    sendable.append(orphan)
                }
            }
            events?.retired(self, false, sendable)
        }
    }

    private func closeInbox() -> [Submission] {
        inbox.withLockedValue { inbox in
            inbox.closed = true
            defer { inbox.items = [] }
            return inbox.items
        }
    }

    // MARK: Deadlines and keep-alive

    private func sweepTick() {
        let now = NIODeadline.now()
        if phase == .starting, now - startedAt > TimeAmount(configuration.connectTimeout) {
            failure = failure ?? PushTransportError.timeout
            if let channel { channel.close(promise: nil) } else { retire(failingEverything: PushTransportError.timeout) }
            return
        }
        if queue.contains(where: { $0.deadline < now }) {
            var kept = CircularBuffer<Submission>(initialCapacity: queue.count)
            for submission in queue {
                if submission.deadline < now {
                    submission.answer.resume(throwing: PushTransportError.timeout)
                } else {
                    kept.append(submission)
                }
            }
            queue = kept
        }
        let expired = streams.filter { $0.value.submission.deadline < now }.map(\.key)
        for id in expired { fail(id, with: .timeout, reset: .cancel) }

        if readSinceSweep {
            readSinceSweep = false
            lastRead = now
            pingSentAt = nil
        }
        if phase == .ready || phase == .draining {
            if let sent = pingSentAt {
                if now - sent > TimeAmount(configuration.pingTimeout) {
                    logger.debug("push connection missed a PING answer; closing", metadata: ["push.origin": "\(origin)"])
                    failure = failure ?? PushTransportError.timeout
                    context?.close(promise: nil)
                }
            } else if now - lastRead > TimeAmount(configuration.pingInterval), let context {
                pingSentAt = now
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0x4845_5241_4C44), ack: false))),
                    promise: nil
                )
                needsFlush = true
            }
        }
        flushIfNeeded()
    }
}
