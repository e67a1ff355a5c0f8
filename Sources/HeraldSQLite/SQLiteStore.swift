import HeraldStore
import Foundation
import GRDB
import HeraldWire
import Logging

/// The embedded store: one SQLite file in WAL mode, written by one process.
///
/// Writes come in batches (the server's intake groups many webhooks into one transaction), so
/// `synchronous = FULL` costs one fsync per batch, not per event.
///
/// WAL checkpoints are taken off the commit path: SQLite's automatic checkpoint runs inside the
/// commit that crosses the threshold and stalls every webhook waiting on that batch for
/// milliseconds (measured: the cause of the p99 at 1,000 events/s). ``checkpoint()`` runs them
/// on a connection of their own instead; the server calls it periodically.
///
/// A passive checkpoint alone never lets the WAL start over while writes keep coming (frames
/// arrive behind it), so under sustained load the file grew without bound, and the commit that
/// finally restarted it truncated hundreds of megabytes (one 240 ms `ftruncate`, measured after
/// a 115,000-event burst). Past ``walRestartPages`` the writer therefore finishes the checkpoint
/// itself, and the WAL never grows much past that size.
public final class SQLiteStore: Sendable {
    let database: AsyncDatabase
    /// Only for checkpoints, so they never wait behind (or hold up) the writer.
    private let checkpointer: AsyncDatabase
    /// In front of the webhook's token lookup; cleared by every commit that writes `device` or
    /// `dead_token`.
    private let tokenCache = TokenResolutionCache()
    /// The WAL length, in pages, from which ``checkpoint()`` restarts the WAL.
    public let walRestartPages: Int

    /// Opens (creating if needed) the database file and migrates it.
    ///
    /// - Parameter walRestartPages: From this many WAL pages (4 KiB each) on, a checkpoint also
    ///   restarts the WAL, taking the writer for a moment. The default is 16 MiB.
    public init(path: String, walRestartPages: Int = 4_096) throws {
        self.walRestartPages = walRestartPages
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            // Give the space back after a WAL that readers kept from restarting. Well above the
            // restart size: the commit that truncates pays for every megabyte it frees.
            try db.execute(sql: "PRAGMA journal_size_limit = \(64 << 20)")
        }
        // The database holds bearer tokens (shared provider tokens) and secret hashes: created
        // owner-only, which SQLite passes on to its WAL and shared-memory files.
        if path != ":memory:" { try OwnerOnlyFile.create(atPath: path) }
        // Opening and migrating run once, before the server takes requests: synchronous is fine.
        let pool = try DatabasePool(path: path, configuration: config)
        try Schema.migrator.migrate(pool)
        pool.add(transactionObserver: TokenResolutionCache.Invalidator(tokenCache), extent: .databaseLifetime)
        database = AsyncDatabase(pool, threads: (writer: DatabaseThread(), reader: DatabaseThread()))
        checkpointer = AsyncDatabase(try DatabaseQueue(path: path, configuration: config))
    }

    /// Opens the store from async code: opening and migrating are synchronous SQLite work, run
    /// on a dispatch queue so no cooperative thread waits on the file.
    public static func open(path: String, walRestartPages: Int = 4_096) async throws -> SQLiteStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try SQLiteStore(path: path, walRestartPages: walRestartPages) })
            }
        }
    }

    /// Copies committed WAL pages into the database file without blocking writers or readers
    /// (a passive checkpoint). Once the WAL is ``walRestartPages`` long, the writer then copies
    /// the few frames committed meanwhile, between two of its transactions, so the WAL is fully
    /// copied and its next commit writes the WAL from the beginning.
    ///
    /// A passive checkpoint never waits: when another connection holds the checkpoint lock, or
    /// the writer is rewriting the WAL index header at that instant, SQLite answers
    /// `SQLITE_BUSY` at once, whatever the busy timeout. That is no failure, only a checkpoint
    /// to take next time, so it is reported as `busy` rather than thrown (it made a store test
    /// fail now and then).
    ///
    /// - Returns: The WAL's size in pages, how many of them are now in the database file, and
    ///   whether SQLite was too busy to checkpoint this time.
    @discardableResult
    public func checkpoint() async throws -> CheckpointResult {
        guard var result = try await Self.passiveCheckpoint(on: checkpointer) else {
            return CheckpointResult(walPages: 0, checkpointed: 0, busy: true)
        }
        if result.walPages >= walRestartPages {
            // On the writer's queue nobody appends while it copies, and it never waits: a
            // RESTART from another connection would have to catch the writer between two
            // transactions, and under sustained load it seldom did (seen in the tests).
            guard let restarted = try await Self.passiveCheckpoint(on: database) else {
                result.busy = true
                return result
            }
            result = restarted
        }
        return result
    }

    /// A passive checkpoint, or nil when SQLite found the database busy.
    private static func passiveCheckpoint(on database: AsyncDatabase) async throws -> CheckpointResult? {
        do {
            return try await database.writeWithoutTransaction { db in
                let result = try db.checkpoint(.passive)
                return CheckpointResult(
                    walPages: result.walFrameCount, checkpointed: result.checkpointedFrameCount, busy: false
                )
            }
        } catch let error as StoreError where error.isBusy {
            return nil
        }
    }

    /// The file's path, for logs.
    public var path: String { database.path }

    /// Runs a trivial query: the health check.
    public func ping() async throws {
        _ = try await database.unsafeRead { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }
}

/// What one ``SQLiteStore/checkpoint()`` did.
public struct CheckpointResult: Sendable, Equatable {
    /// The WAL's length in pages (0 when busy before it could be read).
    public var walPages: Int
    /// Pages of it now copied into the database file.
    public var checkpointed: Int
    /// SQLite was busy (another checkpoint, or the writer mid-update): nothing done, try later.
    public var busy: Bool
}

// MARK: - Outbox

extension SQLiteStore: OutboxStore {
    /// One process per file (WAL mode on a local disk).

    public var writerExecutor: (any TaskExecutor)? { database.writerExecutor }

    public func enqueue(_ jobs: [NewJob], now: Date, leaseUntil: Date, leasing: Int) async throws -> [EnqueueResult] {
        guard !jobs.isEmpty else { return [] }
        let nowValue = now.timeIntervalSince1970
        let lease = leaseUntil.timeIntervalSince1970
        return try await database.write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO job (id, platform, token, notification_type, payload, idempotency_key, state,
                                     attempts, next_attempt_at, lease_until, created_at, expires_at, app,
                                     idempotency_fingerprint)
                    VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (idempotency_key) DO NOTHING
                    """
            )
            var results: [EnqueueResult] = []
            results.reserveCapacity(jobs.count)
            for (index, job) in jobs.enumerated() {
                try insert.execute(arguments: [
                    job.id, job.platform.rawValue, job.token, job.notificationType, job.payload,
                    job.idempotencyKey, job.dueAt?.timeIntervalSince1970 ?? nowValue,
                    index < leasing && job.dueAt == nil ? lease : nil, nowValue,
                    job.expiresAt.timeIntervalSince1970, job.app, job.idempotencyFingerprint,
                ])
                if db.changesCount == 0, let key = job.idempotencyKey {
                    let existing = try Row.fetchOne(
                        db,
                        sql: "SELECT id, idempotency_fingerprint FROM job WHERE idempotency_key = ?",
                        arguments: [key]
                    )
                    let earlier: String? = existing?["idempotency_fingerprint"]
                    results.append(
                        EnqueueResult(
                            id: existing?["id"] ?? job.id, duplicate: true,
                            keyReused: EnqueueResult.reused(earlier: earlier, now: job.idempotencyFingerprint)))
                } else {
                    results.append(EnqueueResult(id: job.id, duplicate: false))
                }
            }
            return results
        }
    }

    public func jobs(idempotencyKeys keys: [String]) async throws -> [String: EarlierJob] {
        guard !keys.isEmpty else { return [:] }
        return try await database.read { db in
            var found: [String: EarlierJob] = [:]
            let statement = try db.cachedStatement(sql: "SELECT id, idempotency_fingerprint FROM job WHERE idempotency_key = ?")
            for key in keys {
                if let row = try Row.fetchOne(statement, arguments: [key]) {
                    found[key] = EarlierJob(id: row["id"], fingerprint: row["idempotency_fingerprint"])
                }
            }
            return found
        }
    }

    public func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxJob] {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    UPDATE job SET lease_until = ?
                    WHERE id IN (
                        SELECT id FROM job
                        WHERE state = 'pending' AND next_attempt_at <= ?
                          AND (lease_until IS NULL OR lease_until < ?)
                        ORDER BY next_attempt_at LIMIT ?)
                    RETURNING id, platform, token, notification_type, payload, attempts, created_at, expires_at, app
                    """,
                arguments: [leaseUntil.timeIntervalSince1970, nowValue, nowValue, limit]
            )
            return rows.compactMap(Self.job(from:))
        }
    }

    public func nextDueAt(now: Date) async throws -> Date? {
        let nowValue = now.timeIntervalSince1970
        return try await database.unsafeRead { db in
            // Walks job_due in order, stepping over the few jobs leased now (at most what the
            // dispatchers hold in memory).
            let statement = try db.cachedStatement(
                sql: """
                    SELECT next_attempt_at FROM job
                    WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < ?)
                    ORDER BY next_attempt_at LIMIT 1
                    """
            )
            return try Double.fetchOne(statement, arguments: [nowValue]).map(Date.init(timeIntervalSince1970:))
        }
    }

    static func job(from row: Row) -> OutboxJob? {
        guard let platform = Platform(rawValue: row["platform"]) else { return nil }
        return OutboxJob(
            id: row["id"],
            platform: platform,
            token: row["token"],
            notificationType: row["notification_type"],
            payload: row["payload"],
            attempts: row["attempts"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]),
            app: row["app"]
        )
    }

    public func complete(_ completions: [JobCompletion], now: Date) async throws {
        guard !completions.isEmpty else { return }
        let nowValue = now.timeIntervalSince1970
        // Committed without an fsync of its own: the next intake commit's fsync makes it durable.
        // A crash before then loses only outcomes, and the jobs are sent again (at-least-once);
        // meanwhile the webhooks' commits do not queue behind an fsync per send batch.
        try await Self.withoutSync(database) { db in
            try Self.record(completions, now: nowValue, in: db)
        }
    }

    /// One transaction committed with `synchronous = NORMAL`: durable against a crash of this
    /// process (the kernel has the pages), made durable against power loss by the next commit's
    /// fsync.
    static func withoutSync(_ database: AsyncDatabase, _ updates: @escaping @Sendable (Database) throws -> Void) async throws {
        try await database.writeWithoutTransaction { db in
            // Cached: prepared once per connection, not twice per outcome batch (callgrind put the
            // two parses at about 6% of a webhook's instructions).
            try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
            defer { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() }
            try db.inTransaction {
                try updates(db)
                return .commit
            }
        }
    }

    private static func record(_ completions: [JobCompletion], now nowValue: Double, in db: Database) throws {
        // Every send stamps the attempt times and the provider's answer, for the dead-letter view.
        let delivered = try db.cachedStatement(
            sql: """
                UPDATE job SET state = 'delivered', attempts = attempts + 1, lease_until = NULL,
                               finished_at = ?1, last_error = NULL,
                               first_attempt_at = coalesce(first_attempt_at, ?1), last_attempt_at = ?1
                WHERE id = ?2 AND state = 'pending'
                """
        )
        let retry = try db.cachedStatement(
            sql: """
                UPDATE job SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = ?1, last_error = ?2,
                               last_answer = ?2, first_attempt_at = coalesce(first_attempt_at, ?3), last_attempt_at = ?3
                WHERE id = ?4 AND state = 'pending'
                """
        )
        // ?3 is the provider's answer: nil when no send was made, which keeps the earlier answer and
        // times and counts no attempt (a job that expired waiting for its retry was not tried again).
        let dead = try db.cachedStatement(
            sql: """
                UPDATE job SET state = 'dead', attempts = attempts + (CASE WHEN ?3 IS NULL THEN 0 ELSE 1 END), lease_until = NULL,
                               finished_at = ?1, last_error = ?2, last_answer = coalesce(?3, last_answer),
                               first_attempt_at = CASE WHEN ?3 IS NULL THEN first_attempt_at
                                                       ELSE coalesce(first_attempt_at, ?1) END,
                               last_attempt_at = CASE WHEN ?3 IS NULL THEN last_attempt_at ELSE ?1 END
                WHERE id = ?4 AND state = 'pending'
                """
        )
        for completion in completions {
            let id = completion.job.id
            switch completion.resolution {
            case .delivered:
                try delivered.execute(arguments: [nowValue, id])
            case .retry(let at, let error):
                try retry.execute(arguments: [at.timeIntervalSince1970, error, nowValue, id])
            case .deadLetter(let reason, let answer):
                try dead.execute(arguments: [nowValue, reason, answer, id])
            case .tokenDead(let reason):
                try dead.execute(arguments: [nowValue, reason, reason, id])
                try Self.markDead(
                    db,
                    platform: completion.job.platform,
                    token: completion.job.token,
                    reason: reason,
                    now: nowValue
                )
            }
        }
    }

    public func release(jobIDs: [String]) async throws {
        guard !jobIDs.isEmpty else { return }
        try await database.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE job SET lease_until = NULL WHERE id = ?")
            for id in jobIDs { try statement.execute(arguments: [id]) }
        }
    }

    public func releaseAllLeases() async throws {
        try await database.write { db in
            try db.execute(sql: "UPDATE job SET lease_until = NULL WHERE state = 'pending' AND lease_until IS NOT NULL")
        }
    }

    public func status(jobID: String) async throws -> JobStatus? {
        try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT id, state, attempts, last_error, next_attempt_at FROM job WHERE id = ?",
                    arguments: [jobID]
                ), let state = JobStatus.State(rawValue: row["state"])
            else { return nil }
            return JobStatus(
                id: row["id"],
                state: state,
                attempts: row["attempts"],
                lastError: row["last_error"],
                nextAttemptAt: Date(timeIntervalSince1970: row["next_attempt_at"])
            )
        }
    }

    public func counts() async throws -> QueueCounts {
        try await database.read { db in
            let byState = try Self.countsByState(in: "job", db)
            return QueueCounts(
                pending: byState["pending"] ?? 0,
                delivered: byState["delivered"] ?? 0,
                dead: byState["dead"] ?? 0
            )
        }
    }

    /// Rows per value of a table's `state` column (a full scan: not for hot paths).
    static func countsByState(in table: String, _ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM \(table) GROUP BY state") {
            counts[row["state"], default: 0] += row["n"] as Int
        }
        return counts
    }

    public func pendingCount() async throws -> Int {
        try await database.read { db in
            // Matches job_due's WHERE, so only the pending jobs' index entries are counted.
            try Int.fetchOne(db, sql: "SELECT count(*) FROM job WHERE state = 'pending'") ?? 0
        }
    }

    public func purgeFinished(deliveredBefore: Date, deadBefore: Date) async throws -> Int {
        var purged = 0
        for (state, before) in [("delivered", deliveredBefore), ("dead", deadBefore)] {
            // In slices, each its own transaction, so the writer is never held for long; the
            // `state != 'pending'` term lets SQLite use job_finished instead of scanning the table.
            while true {
                let deleted = try await database.write { db in
                    try db.execute(
                        sql: """
                            DELETE FROM job WHERE rowid IN (
                                SELECT rowid FROM job
                                WHERE state != 'pending' AND finished_at < ? AND state = ?
                                LIMIT \(Self.purgeSlice))
                            """,
                        arguments: [before.timeIntervalSince1970, state]
                    )
                    return db.changesCount
                }
                purged += deleted
                if deleted < Self.purgeSlice { break }
            }
        }
        return purged
    }

    static let purgeSlice = 2000
}

// MARK: - Dead tokens

extension SQLiteStore: TokenStore {
    public func isDead(platform: Platform, token: String) async throws -> Bool {
        try await database.read { db in
            try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = ? AND token = ?)",
                arguments: [platform.rawValue, token]
            ) ?? false
        }
    }

    public func markDead(platform: Platform, token: String, reason: String, now: Date) async throws {
        try await database.write { db in
            try Self.markDead(db, platform: platform, token: token, reason: reason, now: now.timeIntervalSince1970)
        }
    }

    /// Marks the token dead and dead-letters every job still waiting for it: no further sends.
    static func markDead(_ db: Database, platform: Platform, token: String, reason: String, now: Double) throws {
        try db.execute(
            sql: """
                INSERT INTO dead_token (platform, token, reason, marked_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (platform, token) DO NOTHING
                """,
            arguments: [platform.rawValue, token, reason, now]
        )
        // WITHOUT ROWID: SQLite reports no change events for it, so tell the token cache's observer.
        try db.notifyChanges(in: Table("dead_token"))
        try db.execute(
            sql: """
                UPDATE job SET state = 'dead', lease_until = NULL, finished_at = ?, last_error = 'token_unregistered'
                WHERE platform = ? AND token = ? AND state = 'pending'
                """,
            arguments: [now, platform.rawValue, token]
        )
    }
}

// MARK: - Devices

extension SQLiteStore: DeviceStore {
    public func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, app: String, extras: DeviceExtras, now: Date
    ) async throws -> DeviceRegistration {
        let registration = DeviceRegistration.make(platform: platform, token: token, sealKey: sealKey, app: app)
        let (device, secret) = (registration.device, registration.secret)
        let nowValue = now.timeIntervalSince1970
        try await database.write { db in
            // The install's earlier registration goes first, so nothing of it is left beside the new one.
            if let gateway = extras.wakeGateway {
                try db.execute(
                    sql: "DELETE FROM device WHERE id IN (SELECT device_id FROM wake_gateway_device WHERE install_key = ?)",
                    arguments: [gateway.installKey])
            }
            try db.execute(
                sql: """
                    INSERT INTO device (id, platform, token, alias, secret_hash, seal_key, created_at, updated_at, app)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    device.id, platform.rawValue, token, device.alias, Secrets.hash(secret), sealKey?.base64, nowValue,
                    nowValue, app,
                ]
            )
            if let node = extras.lspNodeID {
                try db.execute(
                    sql: "INSERT INTO lsps5_lsp (device_id, node_id, updated_at) VALUES (?, ?, ?)", arguments: [device.id, node, nowValue])
            }
            for identity in Set(extras.identities) {
                try db.execute(
                    sql: "INSERT INTO device_identity (identity, device_id, created_at) VALUES (?, ?, ?)",
                    arguments: [identity, device.id, nowValue])
            }
            if let hash = extras.challengeHash {
                try db.execute(
                    sql: "INSERT INTO device_challenge (device_id, code_hash, created_at, confirmed_at) VALUES (?, ?, ?, NULL)",
                    arguments: [device.id, hash, nowValue])
            }
            if let gateway = extras.wakeGateway { try Self.insertWakeGatewayDevice(gateway, deviceID: device.id, in: db) }
        }
        return registration
    }

    public func device(alias: String) async throws -> Device? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT id, platform, token, alias, seal_key, app FROM device WHERE alias = ?", arguments: [alias])
                .flatMap(Self.device(from:))
        }
    }

    public func device(id: String, secret: String) async throws -> Device? {
        // Decoded inside the read: a `Row` is not `Sendable`, and a closure returning one once
        // made the compiler pick GRDB's blocking overload here (the hang under load).
        let found: (device: Device, secretHash: Data)? = try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT id, platform, token, alias, seal_key, app, secret_hash FROM device WHERE id = ?",
                    arguments: [id]
                ), let device = Self.device(from: row)
            else { return nil }
            return (device, row["secret_hash"])
        }
        guard let found, Secrets.constantTimeEqual(found.secretHash, Secrets.hash(secret)) else { return nil }
        return found.device
    }

    static func device(from row: Row) -> Device? {
        guard let platform = Platform(rawValue: row["platform"]) else { return nil }
        // A key that no longer parses (never stored by this code) is treated as none rather than
        // losing the device.
        let sealKey = (row["seal_key"] as String?).flatMap { try? SealPublicKey(base64: $0) }
        return Device(
            id: row["id"], platform: platform, token: row["token"], alias: row["alias"], sealKey: sealKey, app: row["app"])
    }

    public func updateToken(deviceID: String, platform: Platform, token: String, now: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE device SET platform = ?, token = ?, updated_at = ? WHERE id = ?",
                arguments: [platform.rawValue, token, now.timeIntervalSince1970, deviceID]
            )
        }
    }

    public func updateSealKey(deviceID: String, sealKey: SealPublicKey?, now: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE device SET seal_key = ?, updated_at = ? WHERE id = ?",
                arguments: [sealKey?.base64, now.timeIntervalSince1970, deviceID]
            )
        }
    }

    public func resolveWebhookToken(_ token: String, rawPlatform: Platform?) async throws -> WebhookTokenResolution {
        let key = TokenResolutionCache.Key(token: token, rawPlatform: rawPlatform)
        let (cached, generation) = tokenCache.lookup(key)
        if let cached { return cached }
        // `unsafeRead`: no transaction around two indexed lookups (they showed up as a third of
        // the lookup's cost); an answer one commit old is what the cache would give anyway.
        let resolution = try await database.unsafeRead { db in
            try Self.readWebhookToken(token, rawPlatform: rawPlatform, in: db)
        }
        tokenCache.store(resolution, for: key, generation: generation)
        return resolution
    }

    private static func readWebhookToken(
        _ token: String, rawPlatform: Platform?, in db: Database
    ) throws -> WebhookTokenResolution {
        // Cached statements: this runs for every webhook, and parsing SQL each time shows up.
        // A token no alias can have (a raw APNs or FCM token) skips both alias lookups.
        var device: Device?
        if DeviceAlias.couldBeAlias(token) {
            let deviceStatement = try db.cachedStatement(sql: "SELECT id, platform, token, alias, seal_key, app FROM device WHERE alias = ?")
            device = try Row.fetchOne(deviceStatement, arguments: [token]).flatMap(Self.device(from:))
            // The alias of a device deleted since, of either form. (Whether an unknown token is an
            // alias or a raw token is the webhook's to decide, by its form.)
            if device == nil {
                let deleted = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM deleted_alias WHERE alias = ?)")
                if try Bool.fetchOne(deleted, arguments: [token]) ?? false {
                    return WebhookTokenResolution(device: nil, isDead: false, isDeletedAlias: true)
                }
            }
        }
        let platform = device?.platform ?? rawPlatform
        guard let platform else { return WebhookTokenResolution(device: device, isDead: false) }
        let deadStatement = try db.cachedStatement(
            sql: "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = ? AND token = ?)"
        )
        let dead = try Bool.fetchOne(deadStatement, arguments: [platform.rawValue, device?.token ?? token]) ?? false
        return WebhookTokenResolution(device: device, isDead: dead)
    }

    public func deleteDevice(id: String, now: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO deleted_alias (alias, deleted_at) SELECT alias, ? FROM device WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id])
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
        }
    }
}

// MARK: - Local development pushes

extension SQLiteStore: LocalPushStore {
    public func feedOwner(platform: Platform, token: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(
                db, sql: "SELECT id FROM device WHERE platform = ? AND token = ? ORDER BY created_at, id LIMIT 1",
                arguments: [platform.rawValue, token])
        }
    }

    public func recordLocalPush(platform: Platform, token: String, payload: Data, now: Date) async throws {
        // The local provider's "send": committed without an fsync of its own, as outcomes are
        // (the next webhook commit's fsync covers it). One fsync per push queued every outcome
        // behind it on the writer, and each moment an outcome waits is one in which `kill -9`
        // makes its push go out twice.
        try await Self.withoutSync(database) { db in
            try db.cachedStatement(sql: "INSERT INTO local_push (platform, token, payload, created_at) VALUES (?, ?, ?, ?)")
                .execute(arguments: [platform.rawValue, token, payload, now.timeIntervalSince1970])
        }
    }

    public func localPushes(platform: Platform, token: String, after: Int64, limit: Int) async throws -> [LocalPush] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, platform, payload, created_at FROM local_push
                    WHERE platform = ? AND token = ? AND seq > ? ORDER BY seq LIMIT ?
                    """,
                arguments: [platform.rawValue, token, after, limit]
            ).compactMap { row in
                guard let platform = Platform(rawValue: row["platform"]) else { return nil }
                return LocalPush(
                    seq: row["seq"],
                    platform: platform,
                    payload: row["payload"],
                    createdAt: Date(timeIntervalSince1970: row["created_at"])
                )
            }
        }
    }
}
