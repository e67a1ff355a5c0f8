import Foundation
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Synchronization
import Testing

@testable import HeraldPostgres
@testable import HeraldSQLite

/// Send outcomes ride on the store's next intake (SQLite: or claim), or are committed alone after
/// the store's linger (`outcomeLinger:`).
///
/// "Held" is shown by what can be seen while it lasts, not by sleeping first: the store's
/// ``HeldOutcomes`` has the outcome, its row is still unwritten and its caller still waits.
/// Only a write that takes it (the next intake or claim) or the linger ends that, and the tests
/// that look give it a minute's linger.
@Suite("Stores: outcomes carried by the next commit")
struct HeldOutcomesTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-held-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func open(linger: Duration) async throws -> SQLiteStore {
        try await SQLiteStore.open(path: folder.appendingPathComponent("herald.sqlite").path, outcomeLinger: linger)
    }

    /// `body` on a fresh store of `backend` whose outcomes wait up to `linger`, with what it holds
    /// (nil for a zero linger).
    func withStore(
        _ backend: Backend, linger: Duration, _ body: (any HeraldStoreBackend, HeldOutcomes?) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let store = try await open(linger: linger)
            try await body(store, store.heldOutcomes)
        case .postgres:
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let store = PostgresStore(
                location: try PostgresLocation(url: database.url), maximumConnections: 4, outcomeLinger: linger,
                logger: quietLogger)
            try await store.migrate()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.client.run() }
                defer { group.cancelAll() }
                try await body(store, store.heldOutcomes)
            }
        }
    }

    /// A leased job, enqueued and ready for its outcome.
    func sentJob(_ store: any HeraldStoreBackend) async throws -> OutboxJob {
        let new = job("t-\(UUID().uuidString)")
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        return try #require(try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(600), limit: 1).first)
    }

    /// Starts `complete` for `sent` and returns a flag that turns true once it has returned.
    func completing(_ store: any HeraldStoreBackend, _ sent: OutboxJob, _ resolution: JobResolution = .delivered)
        -> (returned: Flag, task: Task<Void, any Error>)
    {
        let returned = Flag()
        let task = Task {
            defer { returned.set() }
            try await store.complete([JobCompletion(job: sent, resolution: resolution)], now: t0)
        }
        return (returned, task)
    }

    @Test("an outcome waits for the next intake and is committed with it", arguments: Backend.allCases)
    func ridesOnIntake(_ backend: Backend) async throws {
        try await withStore(backend, linger: .seconds(60)) { store, held in
            let held = try #require(held)
            let sent = try await sentJob(store)
            let (returned, task) = completing(store, sent)
            try #require(await eventually { held.count == 1 })
            // Held: nothing written yet, and its caller still waits.
            #expect(!returned.isSet)
            #expect(try await store.status(jobID: sent.id)?.state == .pending)
            let next = job("t-next")
            _ = try await store.enqueue([next], now: t0, leaseUntil: t0.addingTimeInterval(600))
            // Written by the time the intake returns, long before the minute's linger: its commit
            // carried it.
            #expect(held.count == 0)
            let status = try #require(try await store.status(jobID: sent.id))
            #expect(status.state == .delivered && status.attempts == 1)
            #expect(try await store.status(jobID: next.id)?.state == .pending)
            #expect(await eventually { returned.isSet })
            try await task.value
        }
    }

    @Test("an outcome no commit carries is committed alone once the linger is over", arguments: Backend.allCases)
    func writtenAlone(_ backend: Backend) async throws {
        try await withStore(backend, linger: .milliseconds(150)) { store, _ in
            let sent = try await sentJob(store)
            let started = ContinuousClock.now
            try await store.complete([JobCompletion(job: sent, resolution: .delivered)], now: t0)
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(140), "\(waited)")
            #expect(waited < .seconds(5), "\(waited)")
            #expect(try await store.status(jobID: sent.id)?.state == .delivered)
        }
    }

    @Test("an intake whose commit fails fails the outcomes it carried; they are written on the next try", arguments: Backend.allCases)
    func failedCarrier(_ backend: Backend) async throws {
        try await withStore(backend, linger: .seconds(60)) { store, held in
            let held = try #require(held)
            let sent = try await sentJob(store)
            let (_, task) = completing(store, sent)
            try #require(await eventually { held.count == 1 })
            // The batch's second row repeats the first one's id: the whole write fails.
            let first = job("a")
            var twin = job("b")
            twin.id = first.id
            await #expect(throws: StoreError.self) {
                _ = try await store.enqueue([first, twin], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            }
            // The failed write took the outcome with it: no longer held, not written.
            #expect(held.count == 0)
            await #expect(throws: StoreError.self) { try await task.value }
            #expect(try await store.status(jobID: sent.id)?.state == .pending)
            // The dispatcher's retry: held again, carried by the next intake this time.
            let (returned, again) = completing(store, sent)
            try #require(await eventually { held.count == 1 })
            #expect(!returned.isSet)
            _ = try await store.enqueue([job("c")], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            #expect(held.count == 0)
            #expect(try await store.status(jobID: sent.id)?.state == .delivered)
            #expect(await eventually { returned.isSet })
            try await again.value
        }
    }

    @Test("many outcomes and intakes at once: every outcome is committed once, every caller returns", arguments: Backend.allCases)
    func concurrentCallers(_ backend: Backend) async throws {
        try await withStore(backend, linger: .milliseconds(50)) { store, _ in
            var sent: [OutboxJob] = []
            for _ in 0..<40 { sent.append(try await sentJob(store)) }
            let jobs = sent
            try await withThrowingTaskGroup(of: Void.self) { group in
                for job in jobs {
                    group.addTask { try await store.complete([JobCompletion(job: job, resolution: .delivered)], now: t0) }
                    group.addTask {
                        _ = try await store.enqueue([HeraldStoreTests.job("t-\(UUID().uuidString)")], now: t0, leaseUntil: t0.addingTimeInterval(600))
                    }
                }
                try await group.waitForAll()
            }
            for job in jobs {
                let status = try #require(try await store.status(jobID: job.id))
                #expect(status.state == .delivered && status.attempts == 1, "\(job.id): \(status)")
            }
            #expect(try await store.counts().pending == 40)
        }
    }

    @Test("SQLite: a claim carries held outcomes too, a retry's new due time written first")
    func ridesOnClaim() async throws {
        let store = try await open(linger: .seconds(60))
        let held = try #require(store.heldOutcomes)
        let sent = try await sentJob(store)
        let (returned, task) = completing(store, sent, .retry(at: t0.addingTimeInterval(30), error: "503"))
        try #require(await eventually { held.count == 1 })
        // Held: no attempt counted nor error recorded yet, and its caller still waits.
        #expect(!returned.isSet)
        let before = try #require(try await store.status(jobID: sent.id))
        #expect(before.attempts == 0 && before.lastError == nil)
        // The outcome is written first in the claim's transaction, so the claim sees its due time.
        #expect(try await store.claimDue(now: t0.addingTimeInterval(10), leaseUntil: t0.addingTimeInterval(600), limit: 10).isEmpty)
        #expect(held.count == 0)
        #expect(await eventually { returned.isSet })
        try await task.value
        let status = try #require(try await store.status(jobID: sent.id))
        #expect(status.attempts == 1 && status.lastError == "503")
        #expect(status.nextAttemptAt == t0.addingTimeInterval(30))
    }

    @Test("PostgreSQL: only delivered outcomes wait; a retry is written at once")
    func postgresRetryAtOnce() async throws {
        try await withStore(.postgres, linger: .seconds(60)) { store, held in
            let sent = try await sentJob(store)
            let started = ContinuousClock.now
            try await store.complete(
                [JobCompletion(job: sent, resolution: .retry(at: t0.addingTimeInterval(30), error: "503"))], now: t0)
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(held?.count == 0)
            #expect(try await store.status(jobID: sent.id)?.lastError == "503")
        }
    }

    @Test("with no linger each outcome is committed at once", arguments: Backend.allCases)
    func noLinger(_ backend: Backend) async throws {
        try await withStore(backend, linger: .zero) { store, held in
            #expect(held == nil)
            let sent = try await sentJob(store)
            let started = ContinuousClock.now
            try await store.complete([JobCompletion(job: sent, resolution: .delivered)], now: t0)
            #expect(ContinuousClock.now - started < .seconds(2))
            #expect(try await store.status(jobID: sent.id)?.state == .delivered)
        }
    }
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
