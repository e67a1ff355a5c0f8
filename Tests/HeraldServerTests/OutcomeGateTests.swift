import Foundation
import Synchronization
import Testing

@testable import HeraldServer

/// The bound on answered-but-uncommitted outcomes: what a crash would send twice.
@Suite("Outcome gate")
struct OutcomeGateTests {
    @Test("sends pause once the oldest outcome has waited its bound, and go on at the commit that frees it")
    func pausesUntilCommitted() async throws {
        let gate = OutcomeGate(maxAge: .milliseconds(50), floor: 2, metrics: HeraldMetrics())
        gate.answered()
        gate.answered()
        gate.answered()
        await gate.waitForRoom()  // young: open
        try await Task.sleep(for: .milliseconds(80))
        let resumed = Mutex(false)
        let waiter = Task {
            await gate.waitForRoom()
            resumed.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!resumed.withLock { $0 }, "a send started while three outcomes older than the bound awaited their commit")
        // Two committed, one old one still waiting: under the floor, so sends go on.
        gate.committed(2)
        await waiter.value
        #expect(resumed.withLock { $0 })
        #expect(gate.awaiting == 1 && gate.peak == 3)
    }
}
