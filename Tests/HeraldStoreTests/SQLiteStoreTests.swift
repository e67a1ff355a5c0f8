import Foundation
import HeraldSQLite
import HeraldStore
import HeraldWire
import Synchronization
import Testing

/// What only the SQLite store does: its file, its WAL. Everything else runs on both back ends
/// (``OutboxStoreTests``, ``BackendStoreTests``).
@Suite("SQLite store")
struct SQLiteStoreTests {
    let folder: URL
    let store: SQLiteStore

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore(path: folder.appendingPathComponent("herald.sqlite").path)
    }

    @Test("the database and its WAL are owner-only: they hold shared bearer tokens and secret hashes")
    func ownerOnly() async throws {
        _ = try await store.enqueue([job()], now: t0, leaseUntil: t0.addingTimeInterval(600))
        for suffix in ["", "-wal", "-shm"] {
            let path = store.path + suffix
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(path): \(String(mode ?? 0, radix: 8))")
        }
    }

    @Test("a write that fails part-way keeps none of it, and the next write commits")
    func failedWriteRollsBack() async throws {
        // The second row repeats the first one's id: the batch fails at its second INSERT, after
        // the first went in. The transaction Herald begins and commits itself must roll that back
        // and leave the connection outside any transaction.
        let first = job("a")
        var twin = job("b")
        twin.id = first.id
        await #expect(throws: StoreError.self) {
            _ = try await store.enqueue([first, twin], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        }
        #expect(try await store.pendingCount() == 0)
        let next = job("c")
        _ = try await store.enqueue([next], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        let reopened = try SQLiteStore(path: store.path)
        let claimed = try await reopened.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        #expect(claimed.map(\.id) == [next.id])
    }

    @Test("jobs survive reopening the file")
    func reopen() async throws {
        let new = job()
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(600))
        let reopened = try SQLiteStore(path: store.path)
        try await reopened.releaseAllLeases()
        let claimed = try await reopened.claimDue(
            now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        #expect(claimed.map(\.id) == [new.id])
    }

    @Test("commits never checkpoint the WAL; checkpoint() does, and the WAL then starts over")
    func checkpoints() async throws {
        // One transaction each: with SQLite's automatic checkpoint (every 1,000 pages) the WAL
        // would have been reset along the way.
        for _ in 0..<1_200 {
            _ = try await store.enqueue([job()], now: t0, leaseUntil: t0.addingTimeInterval(60))
        }
        let first = try await store.checkpoint()
        #expect(first.walPages > 1_000)
        #expect(first.checkpointed == first.walPages)
        _ = try await store.enqueue([job()], now: t0, leaseUntil: t0.addingTimeInterval(60))
        let second = try await store.checkpoint()
        #expect(second.walPages < 50)
        #expect(try await store.pendingCount() == 1_201)
    }

    @Test("under writes that never pause, checkpoints still restart the WAL, so its file stays short")
    func walRestartsUnderLoad() async throws {
        let path = folder.appendingPathComponent("busy.sqlite").path
        let busy = try SQLiteStore(path: path, walRestartPages: 200)
        let commits = Mutex(0)
        let stop = Mutex(false)
        // How far the writer may run ahead of the checkpoints: it keeps writing while each one
        // runs, but a starved checker task (a loaded machine) cannot let it grow the WAL without
        // bound, which is what made this test fail under load rather than any fault of the store.
        let allowance = Mutex(120)
        let writer = Task {
            // ~4 pages per commit, one commit after another until the checkpoints are done.
            while !stop.withLock({ $0 }) {
                if commits.withLock({ $0 }) >= allowance.withLock({ $0 }) {
                    try await Task.sleep(for: .milliseconds(1))
                    continue
                }
                _ = try await busy.enqueue([job()], now: t0, leaseUntil: t0.addingTimeInterval(60))
                commits.withLock { $0 += 1 }
            }
        }
        // Paced by commits, not by the clock, so every round sees the WAL past the restart size
        // (60 commits ≈ 240 pages) however fast or slow this machine is.
        var restarts = 0
        var busyRounds = 0
        var previous = 0
        for round in 1...40 {
            while commits.withLock({ $0 }) < round * 60 { try await Task.sleep(for: .milliseconds(1)) }
            allowance.withLock { $0 = (round + 2) * 60 }
            let result = try await busy.checkpoint()
            if result.busy {
                busyRounds += 1
                continue
            }
            if result.walPages < previous { restarts += 1 }
            previous = result.walPages
            if restarts >= 5 { break }
        }
        stop.withLock { $0 = true }
        try await writer.value
        let walBytes = try #require(
            try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        #expect(restarts >= 5, "\(restarts) restarts, \(busyRounds) busy rounds")
        #expect(walBytes < 2_000 * 4_096, "the WAL file grew to \(walBytes / 4_096) pages")
    }
}

@Suite("Job ids")
struct JobIDTests {
    @Test("are version 7 UUIDs that sort by creation time")
    func timeOrdered() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let ids = (0..<50).map { JobID.make(now: start.addingTimeInterval(Double($0) * 0.002)) }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let uuid = try #require(UUID(uuidString: id))
            #expect(uuid.uuidString.lowercased() == id)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
        }
        // The first 48 bits are the Unix time in milliseconds.
        let first = withUnsafeBytes(of: UUID(uuidString: ids[0])!.uuid) { Array($0) }
        let milliseconds = first[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(milliseconds == 1_800_000_000_000)
    }
}
