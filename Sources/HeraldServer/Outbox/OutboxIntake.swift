import Foundation
import HeraldPush
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// How intake groups jobs into commits, and how many may wait.
public struct IntakeConfiguration: Sendable {
    /// Jobs waiting for their commit at most. Past it ``OutboxIntake/submit(_:message:)`` refuses
    /// (`503 overloaded`): a stalled store costs callers a retry, never unbounded memory.
    public var maxPending: Int = 4_096
    /// Jobs per transaction at most.
    public var batchLimit: Int = 2_048

    public init() {}
}

/// Group commit for webhooks: each request waits for its job to be durable, but many requests
/// share one transaction, so the fsync cost is paid per batch and not per event.
public final class OutboxIntake: Service, Sendable {
    struct Pending: Sendable {
        var job: NewJob
        var message: PushMessage?
        var waiter: Waiter

        func resume(_ result: Result<EnqueueResult, any Error>) {
            switch waiter {
            case .single(let continuation): continuation.resume(with: result)
            case .group(let group, let index): group.set(index, result)
            }
        }
    }

    /// Who waits for a job's commit: its own caller, or a caller of several jobs at once.
    enum Waiter: Sendable {
        case single(CheckedContinuation<EnqueueResult, any Error>)
        case group(GroupWaiter, Int)
    }

    /// Resumes a caller of several jobs once each has its result (the first error wins).
    final class GroupWaiter: Sendable {
        private struct State {
            var results: [EnqueueResult?]
            var remaining: Int
            var failed = false
        }
        private let state: NIOLockedValueBox<State>
        private let continuation: CheckedContinuation<[EnqueueResult], any Error>

        init(count: Int, continuation: CheckedContinuation<[EnqueueResult], any Error>) {
            state = NIOLockedValueBox(State(results: Array(repeating: nil, count: count), remaining: count))
            self.continuation = continuation
        }

        func set(_ index: Int, _ result: Result<EnqueueResult, any Error>) {
            enum Action {
                case none
                case succeed([EnqueueResult])
                case fail(any Error)
            }
            let action = state.withLockedValue { state -> Action in
                state.remaining -= 1
                switch result {
                case .success(let value):
                    state.results[index] = value
                    if state.remaining == 0, !state.failed { return .succeed(state.results.compactMap { $0 }) }
                    return .none
                case .failure(let error):
                    if state.failed { return .none }
                    state.failed = true
                    return .fail(error)
                }
            }
            switch action {
            case .none: break
            case .succeed(let results): continuation.resume(returning: results)
            case .fail(let error): continuation.resume(throwing: error)
            }
        }
    }

    let store: any OutboxStore
    let dispatcher: OutboxDispatcher
    let lease: Duration
    let configuration: IntakeConfiguration
    let now: @Sendable () -> Date
    let logger: Logger
    private let buffer = SignalledBuffer<Pending>()
    /// Submitted jobs not yet answered: buffered or in the commit under way.
    private let pending = NIOLockedValueBox(0)

    public init(
        store: some OutboxStore,
        dispatcher: OutboxDispatcher,
        lease: Duration,
        configuration: IntakeConfiguration = .init(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger
    ) {
        self.store = store
        self.dispatcher = dispatcher
        self.lease = lease
        self.configuration = configuration
        self.now = now
        self.logger = logger
    }

    /// Why a job was not accepted: the service is shutting down.
    public struct Unavailable: Error {}

    /// Why a job was not accepted: ``IntakeConfiguration/maxPending`` jobs already wait for
    /// their commit (the store is slow or stalled). Refusing keeps memory bounded; the caller retries.
    public struct Overloaded: Error {}

    /// Returns once the job is committed (or its idempotency key matched an earlier job).
    ///
    /// `message` is the job's payload still decoded; passing it spares the dispatcher a decode.
    public func submit(_ job: NewJob, message: PushMessage? = nil) async throws -> EnqueueResult {
        let admitted = pending.withLockedValue { pending in
            guard pending < configuration.maxPending else { return false }
            pending += 1
            return true
        }
        guard admitted else { throw Overloaded() }
        return try await withCheckedThrowingContinuation { continuation in
            if !buffer.append(Pending(job: job, message: message, waiter: .single(continuation))) {
                leave(1)
                continuation.resume(throwing: Unavailable())
            }
        }
    }

    /// Submits several jobs at once, so they share one transaction (unless they overflow a
    /// batch): a wake's two pushes are committed together or not at all.
    public func submit(_ jobs: [(job: NewJob, message: PushMessage?)]) async throws -> [EnqueueResult] {
        guard !jobs.isEmpty else { return [] }
        let admitted = pending.withLockedValue { pending in
            guard pending + jobs.count <= configuration.maxPending else { return false }
            pending += jobs.count
            return true
        }
        guard admitted else { throw Overloaded() }
        return try await withCheckedThrowingContinuation { continuation in
            let group = GroupWaiter(count: jobs.count, continuation: continuation)
            let pendings = jobs.enumerated().map { index, item in
                Pending(job: item.job, message: item.message, waiter: .group(group, index))
            }
            if !buffer.append(contentsOf: pendings) {
                leave(jobs.count)
                continuation.resume(throwing: Unavailable())
            }
        }
    }

    /// Writes until graceful shutdown. The server is shut down before this service (it comes
    /// later in the service list), so every request it accepted has been committed by then.
    public func run() async throws {
        let buffer = self.buffer
        await withGracefulShutdownHandler {
            // On the store's writer thread when it has one: each commit then runs there at once.
            await withTaskExecutorPreference(store.writerExecutor) {
                await buffer.drain(limit: configuration.batchLimit) { batch in await self.commit(batch) }
            }
        } onGracefulShutdown: {
            buffer.close()
        }
    }

    private func commit(_ batch: [Pending]) async {
        let committedAt = now()
        let leaseUntil = committedAt.addingTimeInterval(lease.timeInterval)
        // As many as the dispatcher has room for are committed leased and handed over; the rest
        // are committed unleased, for it to claim from the store when room frees.
        let room = dispatcher.reserve(upTo: batch.count)
        do {
            let results = try await store.enqueue(batch.map(\.job), now: committedAt, leaseUntil: leaseUntil, leasing: room)
            var fresh: [DispatchItem] = []
            fresh.reserveCapacity(room)
            var deferred = false
            for (index, (pending, result)) in zip(batch, results).enumerated() where !result.duplicate {
                // A job due later (a wake's fallback) is not leased by the store: the claim loop
                // finds it when it falls due.
                if index < room, pending.job.dueAt == nil {
                    let job = OutboxJob(pending.job, createdAt: committedAt)
                    fresh.append(DispatchItem(job: job, message: pending.message, leaseUntil: leaseUntil))
                } else {
                    deferred = true
                }
            }
            dispatcher.unreserve(room - fresh.count)
            if !dispatcher.accept(fresh) {
                // Shutting down: leave them to the next claim (or the next run).
                try? await store.release(jobIDs: fresh.map(\.job.id), leasedUntil: leaseUntil)
            }
            if deferred { dispatcher.deferred() }
            // Room first: a caller answered now may submit again at once.
            leave(batch.count)
            for (pending, result) in zip(batch, results) {
                pending.resume(.success(result))
            }
        } catch {
            dispatcher.unreserve(room)
            logger.error("could not commit webhooks", metadata: ["error": "\(error)", "count": "\(batch.count)"])
            leave(batch.count)
            for pending in batch { pending.resume(.failure(error)) }
        }
    }

    private func leave(_ count: Int) {
        pending.withLockedValue { $0 -= count }
    }
}
