import HeraldExecutors
import HeraldTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A connection's requests run on its event loop while the loop has nothing waiting, and on
/// Swift's pool once it does.
@Suite("the idle-loop executor")
struct IdleLoopExecutorTests {
    @Test("an idle loop runs the job itself; a loop with a job waiting sends the next one to the pool")
    func localWhenIdleSpreadUnderLoad() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        let loop = group.next()
        let executor = IdleLoopExecutor(loop: loop)

        // Idle: on the loop.
        let idle = await Task(executorPreference: executor) { loop.inEventLoop }.value
        #expect(idle)

        // The loop is busy until released: the first job waits there, the second goes to the pool
        // and finishes while the loop is still held.
        let release = NIOLockedValueBox(false)
        let held = loop.submit { while !release.withLockedValue({ $0 }) { usleep(1000) } }
        let waiting = Task(executorPreference: executor) { loop.inEventLoop }
        let spread = NIOLockedValueBox<Bool?>(nil)
        Task(executorPreference: executor) { spread.withLockedValue { $0 = loop.inEventLoop } }
        let ranWhileHeld = await eventually(timeout: .seconds(5)) { spread.withLockedValue { $0 } != nil }
        release.withLockedValue { $0 = true }
        try await held.get()
        #expect(ranWhileHeld && spread.withLockedValue { $0 } == false, "with a job waiting on the loop, the next runs on the pool")
        #expect(await waiting.value, "the job that waited ran on the loop")

        // Idle again: back on the loop.
        #expect(await Task(executorPreference: executor) { loop.inEventLoop }.value)
    }

    @Test("one executor per loop, so its count of waiting jobs is the loop's")
    func onePerLoop() {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { group.shutdownGracefully { _ in } }
        let (a, b) = (group.next(), group.next())
        #expect(IdleLoopExecutor.forLoop(a) === IdleLoopExecutor.forLoop(a))
        #expect(IdleLoopExecutor.forLoop(a) !== IdleLoopExecutor.forLoop(b))
    }
}
