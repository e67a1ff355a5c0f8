import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: OutboxStore {
    /// One process per file (WAL mode on a local disk).

    public var writerExecutor: (any TaskExecutor)? { database.writerExecutor }
    public var senderExecutor: (any TaskExecutor)? { database.writerWhenIdle }

    public func enqueue(_ jobs: [NewJob], now: Date, leaseUntil: Date, leasing: Int) async throws -> [EnqueueResult] {
        guard !jobs.isEmpty else { return [] }
        let nowValue = now.timeIntervalSince1970
        let lease = leaseUntil.timeIntervalSince1970
        return try await writeCarryingOutcomes { db in
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
                    job.id, job.destination.rawValue, job.token, job.notificationType, job.payload,
                    job.idempotencyKey, job.dueAt?.timeIntervalSince1970 ?? nowValue,
                    index < leasing && job.dueAt == nil ? lease : nil, nowValue,
                    job.expiresAt.timeIntervalSince1970, job.app, job.idempotencyFingerprint,
                ])
                if db.changesCount == 0, let key = job.idempotencyKey {
                    let existing = try Row.fetchOne(
                        db,
                        sql: Self.earlierJob,
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

    /// The job made under an idempotency key, as ``EarlierJob`` has it.
    static let earlierJob = "SELECT id, idempotency_fingerprint FROM job WHERE idempotency_key = ?"

    public func jobs(idempotencyKeys keys: [String]) async throws -> [String: EarlierJob] {
        guard !keys.isEmpty else { return [:] }
        return try await database.read { db in
            var found: [String: EarlierJob] = [:]
            let statement = try db.cachedStatement(sql: Self.earlierJob)
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
        return try await writeCarryingOutcomes { db in
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
            var jobs: [OutboxJob] = []
            for row in rows {
                if let job = Self.job(from: row) {
                    jobs.append(job)
                } else {
                    // A row no provider can take (a platform this build does not know, written
                    // by another version): dead-lettered, so it is neither leased again at every
                    // lease's end nor left pending for ever.
                    let id: String = row["id"]
                    let platform: String = row["platform"] ?? ""
                    try db.execute(
                        sql: """
                            UPDATE job SET state = 'dead', lease_until = NULL, finished_at = ?, last_error = ?
                            WHERE id = ? AND state = 'pending'
                            """,
                        arguments: [nowValue, "unknown_platform: \(platform.prefix(32))", id])
                }
            }
            return jobs
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
        guard let destination = JobDestination(rawValue: row["platform"]) else { return nil }
        return OutboxJob(
            id: row["id"],
            destination: destination,
            token: row["token"],
            notificationType: row["notification_type"],
            payload: row["payload"],
            attempts: row["attempts"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]),
            app: row["app"]
        )
    }

    /// Returns once the outcomes are committed: by the next intake or claim when one comes within
    /// the store's outcome linger (``HeldOutcomes``), alone otherwise.
    public func complete(_ completions: [JobCompletion], now: Date) async throws {
        guard !completions.isEmpty else { return }
        let nowValue = now.timeIntervalSince1970
        guard let heldOutcomes else {
            try await writeAlone(completions, now: nowValue)
            return
        }
        try await heldOutcomes.hold(completions, now: nowValue) {
            Task(executorPreference: self.database.writerExecutor) { await self.writeHeldAlone() }
        }
    }

    /// Commits what is still held once the linger is over.
    private func writeHeldAlone() async {
        guard let heldOutcomes else { return }
        do {
            let taken = try await writeAloneTaking { heldOutcomes.take() }
            HeldOutcomes.finish(taken, .success(()))
        } catch {
            // Each taken call was resumed with the error inside the write: the dispatcher retries.
        }
    }

    /// Outcomes committed alone, without an fsync of their own: the next intake commit's fsync
    /// makes them durable. A crash before then loses only outcomes, and the jobs are sent again
    /// (at-least-once); meanwhile the webhooks' commits do not queue behind an fsync per batch.
    private func writeAlone(_ completions: [JobCompletion], now: Double) async throws {
        let deadTokens = self.deadTokens
        try await database.writeWithoutTransaction { db in
            try Self.withoutSync(db) { db in try Self.record(completions, now: now, deadTokens: deadTokens, in: db) }
        }
    }

    /// ``writeAlone(_:now:)`` for the held outcomes `take` returns on the writer's thread; a failure
    /// resumes them with the error before it is rethrown.
    private func writeAloneTaking(_ take: @escaping @Sendable () -> [HeldOutcomes.Held]) async throws -> [HeldOutcomes.Held] {
        let deadTokens = self.deadTokens
        return try await database.writeWithoutTransaction { db in
            let taken = take()
            guard !taken.isEmpty else { return [] }
            do {
                try Self.withoutSync(db) { db in try Self.record(taken, deadTokens: deadTokens, in: db) }
            } catch {
                HeldOutcomes.finish(taken, .failure(Self.storeError(error)))
                throw error
            }
            return taken
        }
    }

    /// A write in a transaction that first commits the outcomes held for it, so one commit
    /// serves both; their callers learn its result.
    func writeCarryingOutcomes<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard let heldOutcomes else { return try await database.write(updates) }
        let deadTokens = self.deadTokens
        let (value, carried) = try await database.writeWithoutTransaction { db in
            let carried = heldOutcomes.take()
            do {
                let value = try db.inPreparedTransaction { db in
                    try Self.record(carried, deadTokens: deadTokens, in: db)
                    return try updates(db)
                }
                return (value, carried)
            } catch {
                HeldOutcomes.finish(carried, .failure(Self.storeError(error)))
                throw error
            }
        }
        HeldOutcomes.finish(carried, .success(()))
        return value
    }

    /// SQLite's failure as the store reports it, for callers resumed from inside a write.
    private static func storeError(_ error: any Error) -> any Error {
        (error as? DatabaseError).map { StoreError($0) } ?? error
    }

    private static func record(_ held: [HeldOutcomes.Held], deadTokens: DeadTokenFilter, in db: Database) throws {
        for batch in held {
            try record(batch.completions, now: batch.now, deadTokens: deadTokens, in: db)
        }
    }

    /// One transaction committed with `synchronous = NORMAL`: durable against a crash of this
    /// process (the kernel has the pages), made durable against power loss by the next commit's
    /// fsync. On the writer's thread.
    private static func withoutSync(_ db: Database, _ updates: (Database) throws -> Void) throws {
        // SQLite prepares a pragma again each time it runs (it acts while being prepared), so
        // caching spares only GRDB's own splitting and wrapping of the SQL.
        try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
        defer { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() }
        try db.inPreparedTransaction(updates)
    }

    private static func record(
        _ completions: [JobCompletion], now nowValue: Double, deadTokens: DeadTokenFilter, in db: Database
    ) throws {
        // Every send stamps the attempt times and the provider's answer, for the dead-letter view.
        let delivered = """
            UPDATE job SET state = 'delivered', attempts = attempts + 1, lease_until = NULL,
                           finished_at = ?1, last_error = NULL,
                           first_attempt_at = coalesce(first_attempt_at, ?1), last_attempt_at = ?1
            WHERE id = ?2 AND state = 'pending'
            """
        let retry = """
            UPDATE job SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = ?1, last_error = ?2,
                           last_answer = ?2, first_attempt_at = coalesce(first_attempt_at, ?3), last_attempt_at = ?3
            WHERE id = ?4 AND state = 'pending' AND (?5 IS NULL OR lease_until = ?5)
            """
        // ?3 is the provider's answer: nil when no send was made, which keeps the earlier answer and
        // times and counts no attempt (a job that expired waiting for its retry was not tried again).
        let dead = """
            UPDATE job SET state = 'dead', attempts = attempts + (CASE WHEN ?3 IS NULL THEN 0 ELSE 1 END), lease_until = NULL,
                           finished_at = ?1, last_error = ?2, last_answer = coalesce(?3, last_answer),
                           first_attempt_at = CASE WHEN ?3 IS NULL THEN first_attempt_at
                                                   ELSE coalesce(first_attempt_at, ?1) END,
                           last_attempt_at = CASE WHEN ?3 IS NULL THEN last_attempt_at ELSE ?1 END
            WHERE id = ?4 AND state = 'pending' AND (?5 IS NULL OR lease_until = ?5)
            """
        let localPush = "INSERT INTO local_push (platform, token, payload, created_at) VALUES (?, ?, ?, ?)"
        // Each looked up once a batch, and only when used: a lookup hashes the whole SQL text.
        var prepared: (delivered: Statement?, retry: Statement?, dead: Statement?, localPush: Statement?)
        func statement(_ slot: inout Statement?, _ sql: String) throws -> Statement {
            if let slot { return slot }
            let found = try db.cachedStatement(sql: sql)
            slot = found
            return found
        }
        for completion in completions {
            let id = completion.job.id
            let lease = completion.leaseUntil?.timeIntervalSince1970
            for payload in completion.localPushes {
                try statement(&prepared.localPush, localPush).execute(
                    arguments: [completion.job.destination.rawValue, completion.job.token, payload, nowValue])
            }
            switch completion.resolution {
            case .delivered:
                try statement(&prepared.delivered, delivered).execute(arguments: [nowValue, id])
            case .retry(let at, let error):
                try statement(&prepared.retry, retry).execute(arguments: [at.timeIntervalSince1970, error, nowValue, id, lease])
            case .deadLetter(let reason, let answer):
                try statement(&prepared.dead, dead).execute(arguments: [nowValue, reason, answer, id, lease])
            case .tokenDead(let reason):
                try statement(&prepared.dead, dead).execute(arguments: [nowValue, reason, reason, id, lease])
                // Only a device's push service says a token is gone.
                if let platform = completion.job.destination.device {
                    try Self.markDead(
                        db, platform: platform, token: completion.job.token, reason: reason, now: nowValue, filter: deadTokens)
                }
            }
        }
    }

    public func release(jobIDs: [String], leasedUntil: Date?) async throws {
        guard !jobIDs.isEmpty else { return }
        let lease = leasedUntil?.timeIntervalSince1970
        try await database.write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE job SET lease_until = NULL WHERE id = ?1 AND state = 'pending' AND (?2 IS NULL OR lease_until = ?2)")
            for id in jobIDs { try statement.execute(arguments: [id, lease]) }
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
        let deadTokens = self.deadTokens
        try await database.write { db in
            try Self.markDead(db, platform: platform, token: token, reason: reason, now: now.timeIntervalSince1970, filter: deadTokens)
        }
    }

    /// Marks the token dead and dead-letters every job still waiting for it: no further sends.
    static func markDead(
        _ db: Database, platform: Platform, token: String, reason: String, now: Double, filter: DeadTokenFilter
    ) throws {
        // Before the commit: a webhook that then finds the token absent from the filter read it
        // before the mark, as it would have read the table.
        filter.insert(platform: platform, token: token)
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
