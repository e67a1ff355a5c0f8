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
        var continuation: CheckedContinuation<EnqueueResult, any Error>
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
        lease: Duration = .seconds(300),
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
            if !buffer.append(Pending(job: job, message: message, continuation: continuation)) {
                leave(1)
                continuation.resume(throwing: Unavailable())
            }
        }
    }

    /// Writes until graceful shutdown. The server is shut down before this service (it comes
    /// later in the service list), so every request it accepted has been committed by then.
    public func run() async throws {
        let buffer = self.buffer
        await withGracefulShutdownHandler {
            await buffer.drain(limit: configuration.batchLimit) { batch in await self.commit(batch) }
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
                if index < room {
                    let job = OutboxJob(pending.job, createdAt: committedAt)
                    fresh.append(DispatchItem(job: job, message: pending.message, leaseUntil: leaseUntil))
                } else {
                    deferred = true
                }
            }
            dispatcher.unreserve(room - fresh.count)
            if !dispatcher.accept(fresh) {
                // Shutting down: leave them to the next claim (or the next run).
                try? await store.release(jobIDs: fresh.map(\.job.id))
            }
            if deferred { dispatcher.deferred() }
            // Room first: a caller answered now may submit again at once.
            leave(batch.count)
            for (pending, result) in zip(batch, results) {
                pending.continuation.resume(returning: result)
            }
        } catch {
            dispatcher.unreserve(room)
            logger.error("could not commit webhooks", metadata: ["error": "\(error)", "count": "\(batch.count)"])
            leave(batch.count)
            for pending in batch { pending.continuation.resume(throwing: error) }
        }
    }

    private func leave(_ count: Int) {
        pending.withLockedValue { $0 -= count }
    }
}
