import Foundation
import HeraldStore
import HeraldWire
import Testing

@testable import HeraldSQLite

/// SQLite's own threads: work from the writer's thread runs at once, work from anywhere else
/// hops there and back, and a loop that prefers the writer's thread commits with no hop at all.
@Suite("SQLite's threads")
struct DatabaseThreadTests {
    @Test("run hops from the cooperative pool and back, and runs at once when already there")
    func runsOnItsThread() async throws {
        let thread = DatabaseThread()
        let name = try await thread.run { currentThreadName() }
        #expect(name.hasPrefix("NIO-ELT"))
        // From the thread itself it runs at once, ahead of a job queued there just before (queued,
        // it would run after that job, and see its mark).
        let mark = Mark()
        let (inline, sawMark) = try await withTaskExecutorPreference(thread) {
            thread.loop.execute { mark.set() }
            return try await thread.run { (currentThreadName(), mark.isSet) }
        }
        #expect(inline == name)
        #expect(!sawMark)
        // From elsewhere it queues: a job queued before it has run by then.
        let queued = Mark()
        thread.loop.execute { queued.set() }
        #expect(try await thread.run { queued.isSet })
    }

    @Test("200 concurrent writers and readers on a store's threads all finish, and the outbox's loop writes on the writer's thread")
    func concurrentAccess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-threads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await SQLiteStore.open(path: folder.appendingPathComponent("t.sqlite").path)
        let executor = try #require(store.writerExecutor)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func job(_ n: Int) -> NewJob {
            NewJob(
                destination: .device(.ios), token: String(format: "%064x", n), notificationType: "t", payload: Data("{}".utf8),
                idempotencyKey: nil, expiresAt: now.addingTimeInterval(3600), app: "default")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<100 {
                group.addTask { _ = try await store.enqueue([job(n)], now: now, leaseUntil: now) }
                group.addTask { _ = try await store.resolveWebhookToken(String(format: "%064x", n), rawPlatform: .ios) }
            }
            try await group.waitForAll()
        }
        // From the writer's own thread, as intake's loop runs: the same store call, no hop.
        let results = try await withTaskExecutorPreference(executor) {
            try await store.enqueue([job(100)], now: now, leaseUntil: now)
        }
        #expect(results.count == 1 && !results[0].duplicate)
        #expect(try await store.pendingCount() == 101)
    }
}

private final class Mark: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

/// The calling thread's name, as NIO set it (`NIO-ELT-…` for its event loop threads).
private func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
}
