import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOSSL
import Synchronization

/// The connections to one origin, and where requests go when a connection stops taking them.
///
/// Each of its slots holds at most one live connection. A request goes to the next slot's
/// connection (opened on demand); when that connection retires (GOAWAY, closed, PING timeout)
/// the requests it had not finished come back here and go to a fresh one. Consecutive failed
/// connects back off, so a dead APNs is not hammered.
///
/// A request sent with ``execute(_:timeout:)`` on one of the client's local loops goes to that
/// loop's own slot instead: written by the thread that submitted it, answered on it. Those
/// slots take no other requests; ``executeInOrder(_:timeout:)`` (a wake's pair) uses the shared ones.
public final class PushEndpoint: Sendable {
    let origin: PushOrigin
    private let configuration: PushHTTPClient.Configuration
    private let tlsContext: NIOSSLContext
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let slots: [Slot]
    /// One per local loop, for the requests submitted on it.
    private let localSlots: [Slot]
    private let next = NIOLockedValueBox(0)

    init(origin: PushOrigin, client: PushHTTPClient) {
        self.origin = origin
        self.configuration = client.configuration
        self.tlsContext = client.tlsContext
        self.eventLoopGroup = client.eventLoopGroup
        self.logger = client.logger
        self.slots = (0..<client.configuration.connectionsPerOrigin).map { _ in Slot(loop: nil) }
        self.localSlots = client.localLoops.map { Slot(loop: $0) }
    }

    /// Sends one request and waits for its answer, at most `timeout`. A cancelled caller (the
    /// dispatcher's shutdown grace ran out) is answered at once.
    public func execute(_ request: PushHTTPRequest, timeout: Duration) async throws -> PushHTTPResponse {
        let answer = ResponseSink()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (slot, local) = slotForRequest()
                let attached = answer.attach { result in
                    if local { slot.inFlight.subtract(1, ordering: .relaxed) }
                    continuation.resume(with: result)
                }
                guard attached else { return }
                submit(Submission(request: request, deadline: .now() + TimeAmount(timeout), answer: answer), to: slot)
            }
        } onCancel: {
            answer.cancel()
        }
    }

    /// Sends `requests` over one connection in the order given and waits for every answer.
    ///
    /// Each request's stream is opened after the one before it (a lower stream id, written
    /// first), yet all are in flight at once: an early request that is slow, throttled or
    /// refused holds up none after it. How a wake's silent push precedes its alert.
    public func executeInOrder(
        _ requests: [PushHTTPRequest], timeout: Duration
    ) async -> [Result<PushHTTPResponse, any Error>] {
        guard !requests.isEmpty else { return [] }
        let slot = nextSlot()
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        let sinks = requests.map { _ in ResponseSink() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { done in
                let answers = AnswerGather(count: requests.count, done: done)
                var attached = true
                for (index, sink) in sinks.enumerated() {
                    attached = sink.attach { answers.set(index, $0) } && attached
                }
                guard attached else {
                    for sink in sinks { sink.cancel() }
                    return
                }
                // One slot, submitted in order: the connection's queue is first in, first out.
                for (request, sink) in zip(requests, sinks) {
                    submit(Submission(request: request, deadline: deadline, answer: sink), to: slot)
                }
            }
        } onCancel: {
            for sink in sinks { sink.cancel() }
        }
    }

    /// Connections currently open or opening; for tests and the bench.
    public var openConnections: Int {
        (slots + localSlots).reduce(0) { $0 + ($1.state.withLockedValue { $0.connection == nil ? 0 : 1 }) }
    }

    /// Connections open or opening whose event loop is `loop`; for tests.
    public func openConnections(on loop: any EventLoop) -> Int {
        (slots + localSlots).reduce(0) { count, slot in
            count + slot.state.withLockedValue { $0.connection.map { $0.eventLoop === loop } == true ? 1 : 0 }
        }
    }

    /// Requests in flight on a local slot at most: past it the loop is busy (under load it is the
    /// SQLite writer, committing), and its requests go to the shared connections, whose loops
    /// are free to read their answers.
    public static let localInFlightLimit = 4

    /// The slot of the local loop this runs on while it has room (counted until the answer);
    /// otherwise the next shared one.
    private func slotForRequest() -> (Slot, local: Bool) {
        for slot in localSlots where slot.loop?.inEventLoop == true {
            if slot.inFlight.add(1, ordering: .relaxed).newValue <= Self.localInFlightLimit { return (slot, true) }
            slot.inFlight.subtract(1, ordering: .relaxed)
            break
        }
        return (nextSlot(), false)
    }

    private func nextSlot() -> Slot {
        if slots.count == 1 { return slots[0] }
        return slots[
            next.withLockedValue { n in
                defer { n = (n + 1) % slots.count }
                return n
            }]
    }

    private func submit(_ submission: Submission, to slot: Slot) {
        while true {
            let action: (connection: PushConnection?, isNew: Bool, failures: Int) = slot.state.withLockedValue { state in
                if state.shutDown { return (nil, false, 0) }
                if let connection = state.connection { return (connection, false, 0) }
                let connection = PushConnection(
                    origin: origin,
                    configuration: configuration,
                    eventLoop: slot.loop ?? eventLoopGroup.next(),
                    logger: logger
                )
                state.connection = connection
                return (connection, true, state.failures)
            }
            guard let connection = action.connection else {
                submission.answer.resume(throwing: PushTransportError.shutDown)
                return
            }
            if action.isNew {
                connection.start(
                    tlsContext: origin.tls ? tlsContext : nil,
                    delay: Self.backoff(afterFailures: action.failures),
                    events: ConnectionEvents(
                        ready: { [weak slot] in slot?.state.withLockedValue { $0.failures = 0 } },
                        retired: { [weak self, weak slot] connection, failed, orphans in
                            guard let self, let slot else {
                                for orphan in orphans { orphan.answer.resume(throwing: PushTransportError.shutDown) }
                                return
                            }
                            slot.state.withLockedValue { state in
                                if state.connection === connection { state.connection = nil }
                                if failed { state.failures += 1 }
                            }
                            for orphan in orphans { self.submit(orphan, to: slot) }
                        }
                    )
                )
            }
            if connection.submit(submission) { return }
            // It retired between the lookup and the submit: forget it and take a fresh one.
            slot.state.withLockedValue { state in
                if state.connection === connection { state.connection = nil }
            }
        }
    }

    /// 0 after a success, then 100 ms doubling to 5 s.
    static func backoff(afterFailures failures: Int) -> TimeAmount {
        guard failures > 0 else { return .zero }
        return .milliseconds(min(5000, 100 << min(failures - 1, 6)))
    }

    func shutdown() async {
        var closing: [PushConnection] = []
        for slot in slots + localSlots {
            slot.state.withLockedValue { state in
                state.shutDown = true
                if let connection = state.connection { closing.append(connection) }
                state.connection = nil
            }
        }
        for connection in closing { await connection.shutdown() }
    }

    final class Slot: Sendable {
        struct State {
            var connection: PushConnection?
            var failures = 0
            var shutDown = false
        }
        let state = NIOLockedValueBox(State())
        /// Where its connections live: a local loop, or nil for the client's group.
        let loop: (any EventLoop)?
        /// Requests sent through it and not yet answered (counted for local slots only).
        let inFlight = Atomic<Int>(0)

        init(loop: (any EventLoop)?) {
            self.loop = loop
        }
    }
}

/// A request waiting for its answer.
struct Submission: Sendable {
    var request: PushHTTPRequest
    var deadline: NIODeadline
    var answer: ResponseSink
    /// Times it was written and its connection died before an answer.
    var unansweredAttempts = 0
    /// Times a GOAWAY or REFUSED_STREAM sent it back unprocessed (not failures, but bounded).
    var refusals = 0
}

/// Where a request's answer goes: the task waiting in ``PushEndpoint/execute(_:timeout:)``, or
/// one place among several in ``PushEndpoint/executeInOrder(_:timeout:)``. The first answer wins
/// and later ones are dropped: a waiter cancelled (shutdown) is answered at once, and the
/// connection's own answer, when it comes, goes nowhere.
final class ResponseSink: Sendable {
    typealias Deliver = @Sendable (Result<PushHTTPResponse, any Error>) -> Void

    private enum State {
        /// Made before its waiter exists; `cancelled` when the waiter gave up even so.
        case unattached(cancelled: Bool)
        case attached(Deliver)
        case answered
    }

    private let state = NIOLockedValueBox(State.unattached(cancelled: false))

    init() {}

    /// Where the answer goes. False, with `deliver` given a `CancellationError` at once, when the
    /// waiter was cancelled before: then nothing should be sent.
    func attach(_ deliver: @escaping Deliver) -> Bool {
        let cancelled = state.withLockedValue { state in
            if case .unattached(cancelled: true) = state {
                state = .answered
                return true
            }
            state = .attached(deliver)
            return false
        }
        if cancelled { deliver(.failure(CancellationError())) }
        return !cancelled
    }

    /// The waiter gave up: answered now with a `CancellationError`.
    func cancel() {
        let deliver: Deliver? = state.withLockedValue { state in
            switch state {
            case .unattached:
                state = .unattached(cancelled: true)
                return nil
            case .attached(let deliver):
                state = .answered
                return deliver
            case .answered:
                return nil
            }
        }
        deliver?(.failure(CancellationError()))
    }

    private func answer(_ result: Result<PushHTTPResponse, any Error>) {
        let deliver: Deliver? = state.withLockedValue { state in
            guard case .attached(let deliver) = state else { return nil }
            state = .answered
            return deliver
        }
        deliver?(result)
    }

    func resume(returning response: PushHTTPResponse) { answer(.success(response)) }
    func resume(throwing error: any Error) { answer(.failure(error)) }
}

/// Collects the answers of requests sent together; resumes `done` with all of them, in order,
/// once the last arrives.
private final class AnswerGather: Sendable {
    private let state: NIOLockedValueBox<(answers: [Result<PushHTTPResponse, any Error>?], missing: Int)>
    private let done: CheckedContinuation<[Result<PushHTTPResponse, any Error>], Never>

    init(count: Int, done: CheckedContinuation<[Result<PushHTTPResponse, any Error>], Never>) {
        self.state = NIOLockedValueBox((Array(repeating: nil, count: count), count))
        self.done = done
    }

    func set(_ index: Int, _ answer: Result<PushHTTPResponse, any Error>) {
        let complete: [Result<PushHTTPResponse, any Error>]? = state.withLockedValue { state in
            guard state.answers[index] == nil else { return nil }
            state.answers[index] = answer
            state.missing -= 1
            return state.missing == 0 ? state.answers.map { $0! } : nil
        }
        if let complete { done.resume(returning: complete) }
    }
}

/// What a connection tells its endpoint.
struct ConnectionEvents: Sendable {
    /// The server's SETTINGS arrived: the connection works.
    var ready: @Sendable () -> Void
    /// The connection takes no more requests; `orphans` were not answered and may go elsewhere.
    /// Called once with `failed` true when it never became ready.
    var retired: @Sendable (_ connection: PushConnection, _ failed: Bool, _ orphans: [Submission]) -> Void
}
