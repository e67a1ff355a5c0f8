import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// Runs jobs on one event loop while that loop has none of them waiting, and on Swift's pool
/// once it has.
///
/// Why: at low rates each crossing between a loop and the pool wakes a sleeping thread on the
/// other core (about 25 µs each on a cloud VM, ~19 per webhook at 100/s). Work that stays on
/// the thread where its last step finished needs no such wake. Under load a loop always has work
/// queued, and two loops would then do what the pool spreads (running every handler on its loop
/// lost 11–21% of the throughput), so the job goes to the pool.
///
/// Used for a connection's requests (its loop reads and writes it) and for the outbox's sends
/// (the SQLite writer's loop, which commits their jobs and records their outcomes).
public final class IdleLoopExecutor: TaskExecutor, Sendable {
    public let loop: any EventLoop
    /// Jobs handed to the loop and not yet started.
    private let waiting = Atomic<Int>(0)

    public init(loop: any EventLoop) {
        self.loop = loop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard waiting.add(1, ordering: .relaxed).newValue == 1 else {
            waiting.subtract(1, ordering: .relaxed)
            globalConcurrentExecutor.enqueue(job)
            return
        }
        loop.execute {
            self.waiting.subtract(1, ordering: .relaxed)
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }

    /// One executor per loop, so that its count of waiting jobs is the loop's.
    public static func forLoop(_ loop: any EventLoop) -> IdleLoopExecutor {
        executors.withLockedValue { executors in
            let key = ObjectIdentifier(loop)
            if let executor = executors[key] { return executor }
            let executor = IdleLoopExecutor(loop: loop)
            executors[key] = executor
            return executor
        }
    }

    private static let executors = NIOLockedValueBox<[ObjectIdentifier: IdleLoopExecutor]>([:])
}
