import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// Where a connection's requests run: on the event loop that reads and writes the connection
/// while that loop has nothing waiting, on Swift's pool once it does.
///
/// Why: at low rates each crossing between the loop and the pool wakes a sleeping thread on the
/// other core (issue 38: about 25 µs each on a cloud VM, ~19 per webhook at 100/s). Run on the
/// loop, a handler's resumption after the commit and its answer need no such wake. Under load a
/// loop always has work queued, and two loops would then do what the pool spreads (issue 26 lost
/// 11–21% of the throughput running every handler on its loop), so the job goes to the pool.
final class ConnectionExecutor: TaskExecutor, Sendable {
    let loop: any EventLoop
    /// Jobs handed to the loop and not yet started.
    private let waiting = Atomic<Int>(0)

    init(loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
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
    static func forLoop(_ loop: any EventLoop) -> ConnectionExecutor {
        executors.withLockedValue { executors in
            let key = ObjectIdentifier(loop)
            if let executor = executors[key] { return executor }
            let executor = ConnectionExecutor(loop: loop)
            executors[key] = executor
            return executor
        }
    }

    private static let executors = NIOLockedValueBox<[ObjectIdentifier: ConnectionExecutor]>([:])
}
