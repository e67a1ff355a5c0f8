import HeraldExecutors
import NIOCore
import NIOPosix

/// A thread of the store's own that SQLite work runs on, synchronously, so that a commit costs
/// no hop to GRDB's dispatch queues and back.
///
/// Why: at low rates each such hop woke a sleeping thread, and those wake-ups, not SQLite, were
/// most of a webhook's CPU (about 25 context switches per webhook at 100/s, over half the time
/// in the kernel's scheduler). The outbox's own loops (intake's group commit, recording
/// outcomes) run *on* the writer's thread as their task executor, so their writes need no hop at
/// all; any other caller hops here and back once, as it did to GRDB's queue.
///
/// Only SQLite work runs here, and only this type blocks in it: no cooperative thread ever waits
/// on the file. One NIO event loop with no channels serves as the thread and its job queue.
final class DatabaseThread: TaskExecutor, @unchecked Sendable {
    private let group: MultiThreadedEventLoopGroup
    let loop: any EventLoop
    /// This thread while it has none of this executor's jobs waiting, Swift's pool once it has:
    /// for work that begins and ends with a write here but is not SQLite work itself (the
    /// outbox's sends), so it costs no wake-up when idle and does not hold up commits under load.
    let whenIdle: IdleLoopExecutor

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        whenIdle = IdleLoopExecutor(loop: loop)
    }

    deinit {
        // Not the blocking form: the last reference may go on this very thread.
        group.shutdownGracefully { _ in }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `work` here: at once when the caller already is (the outbox's loops), otherwise
    /// after one hop, resuming the caller where it was.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        if loop.inEventLoop { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            loop.execute { continuation.resume(with: Result(catching: work)) }
        }
    }
}
