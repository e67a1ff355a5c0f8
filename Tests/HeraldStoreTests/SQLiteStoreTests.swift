import Foundation
import HeraldStore
import HeraldWire
import Synchronization
import Testing

/// The store against a real SQLite file in a temporary folder.
@Suite("SQLite store")
struct SQLiteStoreTests {
    let folder: URL
    let store: SQLiteStore
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteStore(path: folder.appendingPathComponent("herald.sqlite").path)
    }

    func job(_ token: String = "tok", key: String? = nil, ttl: TimeInterval = 3600) -> NewJob {
        NewJob(
            platform: .ios,
            token: token,
            notificationType: "swap_updated",
            payload: Data("{}".utf8),
            idempotencyKey: key,
            expiresAt: t0.addingTimeInterval(ttl)
        )
    }

    @Test("an idempotency key returns the first job and stores one row")
    func idempotency() async throws {
        let first = job(key: "k1")
        let results = try await store.enqueue([first, job(key: "k1")], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        #expect(results == [EnqueueResult(id: first.id, duplicate: false), EnqueueResult(id: first.id, duplicate: true)])
        let again = try await store.enqueue([job(key: "k1")], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        #expect(again == [EnqueueResult(id: first.id, duplicate: true)])
        #expect(try await store.counts().pending == 1)
    }

    @Test("a leased job is not claimed until its lease ends or leases are released")
    func leases() async throws {
        let new = job()
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(60))
        #expect(try await store.claimDue(now: t0.addingTimeInterval(1), leaseUntil: t0.addingTimeInterval(61), limit: 10).isEmpty)
        let late = try await store.claimDue(now: t0.addingTimeInterval(61), leaseUntil: t0.addingTimeInterval(121), limit: 10)
        #expect(late.map(\.id) == [new.id])
        try await store.releaseAllLeases()
        let again = try await store.claimDue(now: t0.addingTimeInterval(62), leaseUntil: t0.addingTimeInterval(122), limit: 10)
        #expect(again.map(\.id) == [new.id])
    }

    @Test("jobs past the leased count are committed unleased, claimable at once, and the next due time skips leased ones")
    func partlyLeased() async throws {
        let (a, b, c) = (job(), job(), job())
        _ = try await store.enqueue([a, b, c], now: t0, leaseUntil: t0.addingTimeInterval(60), leasing: 1)
        #expect(try await store.nextDueAt(now: t0) == t0)
        let claimed = try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        #expect(Set(claimed.map(\.id)) == [b.id, c.id])
        #expect(try await store.nextDueAt(now: t0) == nil)  // every pending job is leased
        try await store.complete(
            [JobCompletion(job: claimed[0], resolution: .retry(at: t0.addingTimeInterval(30), error: "503"))], now: t0
        )
        #expect(try await store.nextDueAt(now: t0) == t0.addingTimeInterval(30))
        // Once a lease has run out its job is due again, at its own due time.
        #expect(try await store.nextDueAt(now: t0.addingTimeInterval(61)) == t0)
    }

    @Test("a retry is claimed again only when it is due, with the attempt counted")
    func retry() async throws {
        let new = job()
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        let claimed = try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        try await store.complete(
            [JobCompletion(job: try #require(claimed.first), resolution: .retry(at: t0.addingTimeInterval(30), error: "retry 503"))],
            now: t0
        )
        #expect(try await store.claimDue(now: t0.addingTimeInterval(29), leaseUntil: t0.addingTimeInterval(90), limit: 10).isEmpty)
        let due = try await store.claimDue(now: t0.addingTimeInterval(30), leaseUntil: t0.addingTimeInterval(90), limit: 10)
        #expect(due.first?.attempts == 1)
        let status = try await store.status(jobID: new.id)
        #expect(status?.lastError == "retry 503")
    }

    @Test("a dead token dead-letters its other pending jobs and is remembered")
    func deadToken() async throws {
        let a = job("dead-token"), b = job("dead-token"), c = job("live-token")
        _ = try await store.enqueue([a, b, c], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        let claimed = try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 1)
        try await store.complete([JobCompletion(job: try #require(claimed.first), resolution: .tokenDead(reason: "Unregistered"))], now: t0)
        #expect(try await store.isDead(platform: .ios, token: "dead-token"))
        #expect(try await store.isDead(platform: .ios, token: "live-token") == false)
        #expect(try await store.isDead(platform: .android, token: "dead-token") == false)
        #expect(try await store.status(jobID: b.id)?.state == .dead)
        #expect(try await store.status(jobID: c.id)?.state == .pending)
    }

    @Test("devices: the secret opens the device, the alias finds it, rotation moves the token")
    func devices() async throws {
        let registration = try await store.registerDevice(platform: .android, token: "fcm-1", now: t0)
        #expect(registration.device.alias.count >= 22)  // ≥ 128 bits of base64url
        #expect(try await store.device(alias: registration.device.alias)?.token == "fcm-1")
        #expect(try await store.device(id: registration.device.id, secret: "wrong") == nil)
        #expect(try await store.device(id: registration.device.id, secret: registration.secret) != nil)
        try await store.updateToken(deviceID: registration.device.id, platform: .android, token: "fcm-2", now: t0)
        #expect(try await store.device(alias: registration.device.alias)?.token == "fcm-2")
        try await store.deleteDevice(id: registration.device.id)
        #expect(try await store.device(alias: registration.device.alias) == nil)
    }

    @Test("webhook token lookups follow every change to devices and dead tokens, though they are cached")
    func tokenResolutionFollowsWrites() async throws {
        let registration = try await store.registerDevice(platform: .ios, token: "apns-1", now: t0)
        let alias = registration.device.alias
        #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.token == "apns-1")
        try await store.updateToken(deviceID: registration.device.id, platform: .ios, token: "apns-2", now: t0)
        #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.token == "apns-2")

        // The dispatcher learns the token is gone.
        #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).isDead == false)
        let pending = job("apns-2")
        _ = try await store.enqueue([pending], now: t0, leaseUntil: t0.addingTimeInterval(60))
        try await store.complete(
            [JobCompletion(job: OutboxJob(pending, createdAt: t0), resolution: .tokenDead(reason: "Unregistered"))],
            now: t0
        )
        #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).isDead)

        // A raw token (Breez style), then marked dead directly.
        let raw = try await store.resolveWebhookToken("raw-1", rawPlatform: .android)
        #expect(raw.device == nil && !raw.isDead)
        try await store.markDead(platform: .android, token: "raw-1", reason: "UNREGISTERED", now: t0)
        #expect(try await store.resolveWebhookToken("raw-1", rawPlatform: .android).isDead)
        #expect(try await store.resolveWebhookToken("raw-1", rawPlatform: .ios).isDead == false)

        try await store.deleteDevice(id: registration.device.id)
        #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device == nil)
        let again = try await store.registerDevice(platform: .android, token: "fcm-9", now: t0)
        #expect(try await store.resolveWebhookToken(again.device.alias, rawPlatform: nil).device?.token == "fcm-9")
    }

    @Test("jobs survive reopening the file")
    func reopen() async throws {
        let new = job()
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(600))
        let reopened = try SQLiteStore(path: store.path)
        try await reopened.releaseAllLeases()
        let claimed = try await reopened.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        #expect(claimed.map(\.id) == [new.id])
    }

    @Test("finished jobs are purged after their retention")
    func purge() async throws {
        let new = job()
        _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(-1))
        let claimed = try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
        try await store.complete([JobCompletion(job: try #require(claimed.first), resolution: .delivered)], now: t0)
        #expect(try await store.purgeFinished(deliveredBefore: t0, deadBefore: t0) == 0)
        #expect(try await store.purgeFinished(deliveredBefore: t0.addingTimeInterval(1), deadBefore: t0) == 1)
    }

    @Test("finished jobs are purged in slices through the index; pending ones stay and are counted")
    func purgeSlices() async throws {
        let finished = (0..<2_500).map { _ in job() }
        let pending = (0..<3).map { _ in job() }
        _ = try await store.enqueue(finished + pending, now: t0, leaseUntil: t0.addingTimeInterval(60))
        try await store.complete(
            finished.map { JobCompletion(job: OutboxJob($0, createdAt: t0), resolution: .delivered) },
            now: t0
        )
        #expect(try await store.pendingCount() == 3)
        #expect(try await store.purgeFinished(deliveredBefore: t0.addingTimeInterval(1), deadBefore: t0) == 2_500)
        #expect(try await store.counts() == QueueCounts(pending: 3, delivered: 0, dead: 0))
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
        let t0 = self.t0
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
            if result.busy { busyRounds += 1; continue }
            if result.walPages < previous { restarts += 1 }
            previous = result.walPages
            if restarts >= 5 { break }
        }
        stop.withLock { $0 = true }
        try await writer.value
        let walBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
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
