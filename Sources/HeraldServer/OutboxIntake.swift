import Foundation
import HeraldPush
import HeraldStore
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

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
    let batchLimit: Int
    let now: @Sendable () -> Date
    let logger: Logger
    private let buffer = SignalledBuffer<Pending>()

    public init(
        store: some OutboxStore,
        dispatcher: OutboxDispatcher,
        lease: Duration = .seconds(300),
        batchLimit: Int = 2048,
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger
    ) {
        self.store = store
        self.dispatcher = dispatcher
        self.lease = lease
        self.batchLimit = batchLimit
        self.now = now
        self.logger = logger
    }

    /// Why a job was not accepted.
    public struct Unavailable: Error {}

    /// Returns once the job is committed (or its idempotency key matched an earlier job).
    ///
    /// `message` is the job's payload still decoded; passing it spares the dispatcher a decode.
    public func submit(_ job: NewJob, message: PushMessage? = nil) async throws -> EnqueueResult {
        try await withCheckedThrowingContinuation { continuation in
            if !buffer.append(Pending(job: job, message: message, continuation: continuation)) {
                continuation.resume(throwing: Unavailable())
            }
        }
    }

    /// Writes until graceful shutdown. The server is shut down before this service (it comes
    /// later in the service list), so every request it accepted has been committed by then.
    public func run() async throws {
        let buffer = self.buffer
        await withGracefulShutdownHandler {
            await buffer.drain(limit: batchLimit) { batch in await self.commit(batch) }
        } onGracefulShutdown: {
            buffer.close()
        }
    }

    private func commit(_ batch: [Pending]) async {
        let committedAt = now()
        do {
            let results = try await store.enqueue(
                batch.map(\.job),
                now: committedAt,
                leaseUntil: committedAt.addingTimeInterval(lease.timeInterval)
            )
            var fresh: [DispatchItem] = []
            fresh.reserveCapacity(batch.count)
            for (pending, result) in zip(batch, results) where !result.duplicate {
                fresh.append(DispatchItem(job: OutboxJob(pending.job, createdAt: committedAt), message: pending.message))
            }
            dispatcher.accept(fresh)
            for (pending, result) in zip(batch, results) {
                pending.continuation.resume(returning: result)
            }
        } catch {
            logger.error("could not commit webhooks", metadata: ["error": "\(error)", "count": "\(batch.count)"])
            for pending in batch { pending.continuation.resume(throwing: error) }
        }
    }
}
