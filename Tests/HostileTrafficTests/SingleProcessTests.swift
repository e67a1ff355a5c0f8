import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One `herald serve` per SQLite file: a second would free the first's leases and send twice.
@Suite("One server per SQLite file")
struct SingleProcessTests {
    @Test("a second serve on the same SQLite file refuses to start and says why; after a kill -9 the file is free again")
    func secondServerRefused() async throws {
        let first = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let second = try ServerProcess(
            arguments: ServerProcess.liftedTargetLimits, folder: first.folder.appendingPathComponent("second"), database: first.database)
        let end = ContinuousClock.now + .seconds(15)
        while second.process.isRunning && ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!second.process.isRunning, "the second server kept running")
        #expect(second.process.terminationStatus != 0)
        let log = second.logTail()
        #expect(log.contains("is already serving"), "\(log)")
        #expect(log.contains("process \(first.process.processIdentifier)"), "\(log)")
        #expect(await first.waitUntilHealthy(timeout: .seconds(2)))

        // The kernel drops the lock with the process: a restart after a crash is not locked out.
        #expect(try await first.crashAndRestart())
    }
}
