import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: OutboxStore {
    /// Rows per multi-row INSERT: 10 parameters each, well under the protocol's 65,535.
    static let insertChunk = 1_000

    public func enqueue(
        _ jobs: [NewJob], now: Date, leaseUntil: Date, leasing: Int
    ) async throws
        -> [EnqueueResult]
    {
        guard !jobs.isEmpty else { return [] }
        let nowValue = now.timeIntervalSince1970
        let lease = leaseUntil.timeIntervalSince1970
        return try await transaction { connection, logger in
            var inserted: Set<String> = []
            for start in stride(from: 0, to: jobs.count, by: Self.insertChunk) {
                let end = min(start + Self.insertChunk, jobs.count)
                var binds = PostgresBindings(capacity: (end - start) * 11)
                var values: [String] = []
                values.reserveCapacity(end - start)
                for index in start..<end {
                    let job = jobs[index]
                    let base = binds.count
                    binds.append(job.id)
                    binds.append(job.platform.rawValue)
                    binds.append(job.token)
                    binds.append(job.notificationType)
                    try binds.append(job.payload)
                    binds.append(job.idempotencyKey)
                    binds.append(nowValue)
                    binds.append(index < leasing && job.dueAt == nil ? lease : nil)
                    binds.append(job.expiresAt.timeIntervalSince1970)
                    binds.append(job.app)
                    binds.append(job.idempotencyFingerprint)
                    let marks = (1...11).map { "$\(base + $0)" }
                    // next_attempt_at and created_at are both `now` unless the job is due later:
                    // one parameter for the two then.
                    var due = marks[6]
                    if let dueAt = job.dueAt {
                        binds.append(dueAt.timeIntervalSince1970)
                        due = "$\(base + 12)"
                    }
                    values.append(
                        "(\(marks[0]), \(marks[1]), \(marks[2]), \(marks[3]), \(marks[4]), \(marks[5]), 'pending', 0, "
                            + "\(due), \(marks[7]), \(marks[6]), \(marks[8]), \(marks[9]), \(marks[10]))"
                    )
                }
                let sql = """
                    INSERT INTO job (id, platform, token, notification_type, payload, idempotency_key, state,
                                     attempts, next_attempt_at, lease_until, created_at, expires_at, app,
                                     idempotency_fingerprint)
                    VALUES \(values.joined(separator: ", "))
                    ON CONFLICT (idempotency_key) DO NOTHING
                    RETURNING id
                    """
                for try await id in try await connection.query(
                    PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger
                )
                .decode(String.self) {
                    inserted.insert(id)
                }
            }
            // Jobs not inserted met an earlier job with their key: read back its id.
            let duplicateKeys = jobs.filter { !inserted.contains($0.id) }.compactMap(\.idempotencyKey)
            var existing: [String: (id: String, fingerprint: String?)] = [:]
            if !duplicateKeys.isEmpty {
                let rows = try await connection.query(Self.earlierJobs(duplicateKeys), logger: logger)
                for try await (key, id, fingerprint) in rows.decode((String, String, String?).self) { existing[key] = (id, fingerprint) }
            }
            return jobs.map { job in
                if inserted.contains(job.id) { return EnqueueResult(id: job.id, duplicate: false) }
                let earlier = job.idempotencyKey.flatMap { existing[$0] }
                return EnqueueResult(
                    id: earlier?.id ?? job.id, duplicate: true,
                    keyReused: EnqueueResult.reused(earlier: earlier?.fingerprint, now: job.idempotencyFingerprint))
            }
        }
    }

    /// The jobs made under these idempotency keys: key, id and fingerprint, as ``EarlierJob`` has them.
    static func earlierJobs(_ keys: [String]) -> PostgresQuery {
        "SELECT idempotency_key, id, idempotency_fingerprint FROM job WHERE idempotency_key = ANY(\(keys))"
    }

    public func jobs(idempotencyKeys keys: [String]) async throws -> [String: EarlierJob] {
        guard !keys.isEmpty else { return [:] }
        var found: [String: EarlierJob] = [:]
        for row in try await rows(Self.earlierJobs(keys)) {
            let (key, id, fingerprint) = try row.decode((String, String, String?).self)
            found[key] = EarlierJob(id: id, fingerprint: fingerprint)
        }
        return found
    }

    public func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxJob] {
        let nowValue = now.timeIntervalSince1970
        // SKIP LOCKED: processes claiming at once take different jobs instead of queueing on
        // each other's row locks; a lease already taken, and not yet run out, is left alone.
        let rows = try await rows(
            """
            UPDATE job SET lease_until = \(leaseUntil.timeIntervalSince1970)
            WHERE id IN (
                SELECT id FROM job
                WHERE state = 'pending' AND next_attempt_at <= \(nowValue)
                  AND (lease_until IS NULL OR lease_until < \(nowValue))
                ORDER BY next_attempt_at LIMIT \(limit)
                FOR UPDATE SKIP LOCKED)
            RETURNING id, platform, token, notification_type, payload, attempts, created_at, expires_at, app
            """
        )
        return try rows.compactMap(Self.job(from:)).sorted { $0.createdAt < $1.createdAt }
    }

    static func job(from row: PostgresRow) throws -> OutboxJob? {
        let (id, platform, token, type, payload, attempts, createdAt, expiresAt, app) = try row.decode(
            (String, String, String, String, Data, Int, Double, Double, String).self
        )
        guard let platform = Platform(rawValue: platform) else { return nil }
        return OutboxJob(
            id: id, platform: platform, token: token, notificationType: type, payload: payload,
            attempts: attempts,
            createdAt: PostgresRow.date(createdAt), expiresAt: PostgresRow.date(expiresAt), app: app
        )
    }

    public func nextDueAt(now: Date) async throws -> Date? {
        let rows = try await rows(
            """
            SELECT next_attempt_at FROM job
            WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < \(now.timeIntervalSince1970))
            ORDER BY next_attempt_at LIMIT 1
            """
        )
        return try rows.first.map { PostgresRow.date(try $0.decode(Double.self)) }
    }

    public func complete(_ completions: [JobCompletion], now: Date) async throws {
        guard !completions.isEmpty else { return }
        let nowValue = now.timeIntervalSince1970
        var delivered: [String] = []
        var retryIDs: [String] = []
        var retryAt: [Double] = []
        var retryErrors: [String] = []
        var deadIDs: [String] = []
        var deadReasons: [String] = []
        // The provider's last answer, "" when none was asked (arrays of optionals do not bind).
        var deadAnswers: [String] = []
        var deadTokens: [(platform: Platform, token: String, reason: String)] = []
        for completion in completions {
            switch completion.resolution {
            case .delivered:
                delivered.append(completion.job.id)
            case .retry(let at, let error):
                retryIDs.append(completion.job.id)
                retryAt.append(at.timeIntervalSince1970)
                retryErrors.append(error)
            case .deadLetter(let reason, let answer):
                deadIDs.append(completion.job.id)
                deadReasons.append(reason)
                deadAnswers.append(answer ?? "")
            case .tokenDead(let reason):
                deadIDs.append(completion.job.id)
                deadReasons.append(reason)
                deadAnswers.append(reason)
                deadTokens.append((completion.job.platform, completion.job.token, reason))
            }
        }
        // One statement per kind of outcome, whatever the batch's size.
        try await transaction {
            [delivered, retryIDs, retryAt, retryErrors, deadIDs, deadReasons, deadAnswers, deadTokens]
            connection, logger in
            if !delivered.isEmpty {
                try await connection.query(
                    """
                    UPDATE job SET state = 'delivered', attempts = attempts + 1, lease_until = NULL,
                                   finished_at = \(nowValue), last_error = NULL,
                                   first_attempt_at = coalesce(first_attempt_at, \(nowValue)), last_attempt_at = \(nowValue)
                    WHERE id = ANY(\(delivered)) AND state = 'pending'
                    """,
                    logger: logger
                )
            }
            if !retryIDs.isEmpty {
                try await connection.query(
                    """
                    UPDATE job SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = r.at, last_error = r.error,
                                   last_answer = r.error, first_attempt_at = coalesce(first_attempt_at, \(nowValue)),
                                   last_attempt_at = \(nowValue)
                    FROM unnest(\(retryIDs)::text[], \(retryAt)::float8[], \(retryErrors)::text[]) AS r(id, at, error)
                    WHERE job.id = r.id AND job.state = 'pending'
                    """,
                    logger: logger
                )
            }
            if !deadIDs.isEmpty {
                try await connection.query(
                    """
                    UPDATE job SET state = 'dead', attempts = attempts + (CASE WHEN r.answer = '' THEN 0 ELSE 1 END), lease_until = NULL,
                                   finished_at = \(nowValue), last_error = r.reason,
                                   last_answer = coalesce(nullif(r.answer, ''), last_answer),
                                   first_attempt_at = CASE WHEN r.answer = '' THEN first_attempt_at
                                                           ELSE coalesce(first_attempt_at, \(nowValue)) END,
                                   last_attempt_at = CASE WHEN r.answer = '' THEN last_attempt_at ELSE \(nowValue) END
                    FROM unnest(\(deadIDs)::text[], \(deadReasons)::text[], \(deadAnswers)::text[]) AS r(id, reason, answer)
                    WHERE job.id = r.id AND job.state = 'pending'
                    """,
                    logger: logger
                )
            }
            for dead in deadTokens {
                try await Self.markDead(
                    platform: dead.platform, token: dead.token, reason: dead.reason, now: nowValue,
                    on: connection, logger: logger
                )
            }
        }
    }

    public func release(jobIDs: [String]) async throws {
        guard !jobIDs.isEmpty else { return }
        try await rows(
            "UPDATE job SET lease_until = NULL WHERE id = ANY(\(jobIDs)) AND state = 'pending'")
    }

    /// Refused: other processes may hold leases on this database right now.
    public func releaseAllLeases() async throws {
        throw PostgresStoreRefusal(
            description:
                "several processes share a PostgreSQL store: leases are left to run out, never freed all at once"
        )
    }

    public func status(jobID: String) async throws -> JobStatus? {
        let rows = try await rows(
            "SELECT id, state, attempts, last_error, next_attempt_at FROM job WHERE id = \(jobID)"
        )
        guard let row = rows.first else { return nil }
        let (id, state, attempts, lastError, next) = try row.decode(
            (String, String, Int, String?, Double).self)
        guard let state = JobStatus.State(rawValue: state) else { return nil }
        return JobStatus(
            id: id, state: state, attempts: attempts, lastError: lastError,
            nextAttemptAt: PostgresRow.date(next))
    }

    public func counts() async throws -> QueueCounts {
        let byState = try await countsByState(in: "job")
        return QueueCounts(
            pending: byState["pending"] ?? 0, delivered: byState["delivered"] ?? 0,
            dead: byState["dead"] ?? 0)
    }

    /// Rows per value of a table's `state` column (a full scan: not for hot paths).
    func countsByState(in table: String) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await rows(
            PostgresQuery(unsafeSQL: "SELECT state, count(*) FROM \(table) GROUP BY state"))
        {
            let (state, count) = try row.decode((String, Int).self)
            counts[state, default: 0] += count
        }
        return counts
    }

    public func pendingCount() async throws -> Int {
        try await rows("SELECT count(*) FROM job WHERE state = 'pending'").first?.decode(Int.self) ?? 0
    }

    public func purgeFinished(deliveredBefore: Date, deadBefore: Date) async throws -> Int {
        var purged = 0
        for (state, before) in [("delivered", deliveredBefore), ("dead", deadBefore)] {
            // In slices, each its own transaction, so no statement holds many row locks for long.
            while true {
                let deleted =
                    try await rows(
                        """
                        WITH gone AS (
                            DELETE FROM job WHERE id IN (
                                SELECT id FROM job
                                WHERE state <> 'pending' AND state = \(state) AND finished_at < \(before.timeIntervalSince1970)
                                LIMIT \(Self.purgeSlice))
                            RETURNING 1)
                        SELECT count(*) FROM gone
                        """
                    ).first?.decode(Int.self) ?? 0
                purged += deleted
                if deleted < Self.purgeSlice { break }
            }
        }
        return purged
    }

    static let purgeSlice = 2_000
}

extension PostgresStore: TokenStore {
    public func isDead(platform: Platform, token: String) async throws -> Bool {
        try await rows(
            "SELECT EXISTS (SELECT 1 FROM dead_token WHERE platform = \(platform.rawValue) AND token = \(token))"
        ).first?.decode(Bool.self) ?? false
    }

    public func markDead(platform: Platform, token: String, reason: String, now: Date) async throws {
        try await transaction { connection, logger in
            try await Self.markDead(
                platform: platform, token: token, reason: reason, now: now.timeIntervalSince1970,
                on: connection,
                logger: logger
            )
        }
    }

    /// Marks the token dead and dead-letters every job still waiting for it: no further sends.
    static func markDead(
        platform: Platform, token: String, reason: String, now: Double,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO dead_token (platform, token, reason, marked_at)
            VALUES (\(platform.rawValue), \(token), \(reason), \(now))
            ON CONFLICT (platform, token) DO NOTHING
            """,
            logger: logger
        )
        try await connection.query(
            """
            UPDATE job SET state = 'dead', lease_until = NULL, finished_at = \(now), last_error = 'token_unregistered'
            WHERE platform = \(platform.rawValue) AND token = \(token) AND state = 'pending'
            """,
            logger: logger
        )
    }
}
