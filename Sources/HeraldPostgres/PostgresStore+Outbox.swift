import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: OutboxStore {
    public func enqueue(
        _ jobs: [NewJob], now: Date, leaseUntil: Date, leasing: Int
    ) async throws
        -> [EnqueueResult]
    {
        guard !jobs.isEmpty else { return [] }
        let nowValue = now.timeIntervalSince1970
        let lease = leaseUntil.timeIntervalSince1970
        // One prepared statement whatever the batch's size: a VALUES list per batch was new SQL
        // for PostgreSQL to parse and plan every time. It commits on its own; a job it skips met
        // an earlier one with its key, whose id is read back after (that row is committed too).
        // Delivered outcomes held for this moment ride in the same statement (``HeldOutcomes``).
        let carried = heldOutcomes?.take() ?? []
        var statement = InsertJobsStatement(jobs, now: nowValue, lease: lease, leasing: leasing)
        for held in carried {
            statement.deliveredIDs += held.completions.map(\.job.id)
            statement.deliveredAt += repeatElement(held.now, count: held.completions.count)
        }
        var inserted: Set<String> = []
        do {
            for id in try await rows(statement) { inserted.insert(id) }
        } catch {
            HeldOutcomes.finish(carried, .failure(error))
            throw error
        }
        HeldOutcomes.finish(carried, .success(()))
        let duplicateKeys = jobs.filter { !inserted.contains($0.id) }.compactMap(\.idempotencyKey)
        var existing: [String: (id: String, fingerprint: String?)] = [:]
        if !duplicateKeys.isEmpty {
            for row in try await rows(Self.earlierJobs(duplicateKeys)) {
                let (key, id, fingerprint) = try row.decode((String, String, String?).self)
                existing[key] = (id, fingerprint)
            }
        }
        return jobs.map { job in
            if inserted.contains(job.id) { return EnqueueResult(id: job.id, duplicate: false) }
            let earlier = job.idempotencyKey.flatMap { existing[$0] }
            return EnqueueResult(
                id: earlier?.id ?? job.id, duplicate: true,
                keyReused: EnqueueResult.reused(earlier: earlier?.fingerprint, now: job.idempotencyFingerprint))
        }
    }

    /// A batch of new jobs as one row each of parallel arrays. Arrays hold no NULLs here: a
    /// missing time is NaN and a missing text is flagged beside it. It also marks delivered the
    /// jobs whose outcomes it carries (`$15`, `$16`; empty arrays when none).
    struct InsertJobsStatement: PostgresPreparedStatement {
        static let sql = """
            WITH delivered AS (
                UPDATE job SET state = 'delivered', attempts = attempts + 1, lease_until = NULL, finished_at = d.at,
                               last_error = NULL, first_attempt_at = coalesce(first_attempt_at, d.at),
                               last_attempt_at = d.at
                FROM unnest($15::text[], $16::float8[]) AS d(id, at)
                WHERE job.id = d.id AND job.state = 'pending')
            INSERT INTO job (id, platform, token, notification_type, payload, idempotency_key, state, attempts,
                             next_attempt_at, lease_until, created_at, expires_at, app, idempotency_fingerprint)
            SELECT j.id, j.platform, j.token, j.type, j.payload, CASE WHEN j.has_key THEN j.key END, 'pending', 0,
                   coalesce(nullif(j.due, 'NaN'), $12), nullif(j.lease, 'NaN'), $12, j.expires, j.app,
                   CASE WHEN j.has_fingerprint THEN j.fingerprint END
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::bool[],
                        $8::float8[], $9::float8[], $10::float8[], $11::text[], $13::text[], $14::bool[])
                 AS j(id, platform, token, type, payload, key, has_key, due, lease, expires, app, fingerprint,
                      has_fingerprint)
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """
        static let bindingDataTypes: [PostgresDataType] = [
            .textArray, .textArray, .textArray, .textArray, .byteaArray, .textArray, .boolArray,
            .float8Array, .float8Array, .float8Array, .textArray, .float8, .textArray, .boolArray,
            .textArray, .float8Array,
        ]
        let jobs: [NewJob]
        let now: Double
        let lease: Double
        let leasing: Int
        var deliveredIDs: [String] = []
        var deliveredAt: [Double] = []

        init(_ jobs: [NewJob], now: Double, lease: Double, leasing: Int) {
            self.jobs = jobs
            self.now = now
            self.lease = lease
            self.leasing = leasing
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 16)
            bindings.append(jobs.map(\.id))
            bindings.append(jobs.map(\.destination.rawValue))
            bindings.append(jobs.map(\.token))
            bindings.append(jobs.map(\.notificationType))
            bindings.append(jobs.map { ByteBuffer(bytes: $0.payload) })
            bindings.append(jobs.map { $0.idempotencyKey ?? "" })
            bindings.append(jobs.map { $0.idempotencyKey != nil })
            bindings.append(jobs.map { $0.dueAt?.timeIntervalSince1970 ?? .nan })
            bindings.append(jobs.indices.map { jobs[$0].dueAt == nil && $0 < leasing ? lease : .nan })
            bindings.append(jobs.map(\.expiresAt.timeIntervalSince1970))
            bindings.append(jobs.map(\.app))
            bindings.append(now)
            bindings.append(jobs.map { $0.idempotencyFingerprint ?? "" })
            bindings.append(jobs.map { $0.idempotencyFingerprint != nil })
            bindings.append(deliveredIDs)
            bindings.append(deliveredAt)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
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
        var jobs: [OutboxJob] = []
        var unknown: [(id: String, platform: String)] = []
        for row in rows {
            if let job = try Self.job(from: row) {
                jobs.append(job)
            } else {
                let columns = row.makeRandomAccess()
                unknown.append((try columns["id"].decode(String.self), try columns["platform"].decode(String.self)))
            }
        }
        // A row no provider can take (a platform this build does not know, written by another
        // version): dead-lettered, so it is neither leased again at every lease's end nor left
        // pending for ever.
        for row in unknown {
            try await self.rows(
                """
                UPDATE job SET state = 'dead', lease_until = NULL, finished_at = \(nowValue),
                               last_error = \("unknown_platform: " + row.platform.prefix(32))
                WHERE id = \(row.id) AND state = 'pending'
                """)
        }
        return jobs.sorted { $0.createdAt < $1.createdAt }
    }

    static func job(from row: PostgresRow) throws -> OutboxJob? {
        let (id, platform, token, type, payload, attempts, createdAt, expiresAt, app) = try row.decode(
            (String, String, String, String, Data, Int, Double, Double, String).self
        )
        guard let destination = JobDestination(rawValue: platform) else { return nil }
        return OutboxJob(
            id: id, destination: destination, token: token, notificationType: type, payload: payload,
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

    /// Returns once the outcomes are written. A batch of delivered ones without local pushes
    /// (the usual) waits up to the store's outcome linger for this process's next intake to
    /// carry it (``HeldOutcomes``); any other is written at once.
    public func complete(_ completions: [JobCompletion], now: Date) async throws {
        guard !completions.isEmpty else { return }
        let nowValue = now.timeIntervalSince1970
        if let heldOutcomes, completions.allSatisfy({ $0.resolution == .delivered && $0.localPushes.isEmpty }) {
            try await heldOutcomes.hold(completions, now: nowValue) {
                Task { await self.writeHeldAlone() }
            }
            return
        }
        try await write(completions, now: nowValue)
    }

    /// Writes what is still held once the linger is over.
    private func writeHeldAlone() async {
        guard let heldOutcomes else { return }
        for held in heldOutcomes.take() {
            do {
                try await write(held.completions, now: held.now)
                HeldOutcomes.finish([held], .success(()))
            } catch {
                HeldOutcomes.finish([held], .failure(error))
            }
        }
    }

    private func write(_ completions: [JobCompletion], now nowValue: Double) async throws {
        var delivered: [String] = []
        var retryIDs: [String] = []
        var retryAt: [Double] = []
        var retryErrors: [String] = []
        // The lease each was sent under, NaN when none is named (``JobCompletion/leaseUntil``).
        var retryLeases: [Double] = []
        var deadLeases: [Double] = []
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
                retryLeases.append(completion.leaseUntil?.timeIntervalSince1970 ?? .nan)
            case .deadLetter(let reason, let answer):
                deadIDs.append(completion.job.id)
                deadLeases.append(completion.leaseUntil?.timeIntervalSince1970 ?? .nan)
                deadReasons.append(reason)
                deadAnswers.append(answer ?? "")
            case .tokenDead(let reason):
                deadIDs.append(completion.job.id)
                deadLeases.append(completion.leaseUntil?.timeIntervalSince1970 ?? .nan)
                deadReasons.append(reason)
                deadAnswers.append(reason)
                // Only a device's push service says a token is gone.
                if let platform = completion.job.destination.device {
                    deadTokens.append((platform, completion.job.token, reason))
                }
            }
        }
        // One statement per kind of outcome, whatever the batch's size.
        var statements: [PostgresQuery] = []
        if !delivered.isEmpty {
            statements.append(
                """
                UPDATE job SET state = 'delivered', attempts = attempts + 1, lease_until = NULL,
                               finished_at = \(nowValue), last_error = NULL,
                               first_attempt_at = coalesce(first_attempt_at, \(nowValue)), last_attempt_at = \(nowValue)
                WHERE id = ANY(\(delivered)) AND state = 'pending'
                """)
        }
        if !retryIDs.isEmpty {
            statements.append(
                """
                UPDATE job SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = r.at, last_error = r.error,
                               last_answer = r.error, first_attempt_at = coalesce(first_attempt_at, \(nowValue)),
                               last_attempt_at = \(nowValue)
                FROM unnest(\(retryIDs)::text[], \(retryAt)::float8[], \(retryErrors)::text[], \(retryLeases)::float8[])
                     AS r(id, at, error, lease)
                WHERE job.id = r.id AND job.state = 'pending' AND (r.lease = 'NaN' OR job.lease_until = r.lease)
                """)
        }
        if !deadIDs.isEmpty {
            statements.append(
                """
                UPDATE job SET state = 'dead', attempts = attempts + (CASE WHEN r.answer = '' THEN 0 ELSE 1 END), lease_until = NULL,
                               finished_at = \(nowValue), last_error = r.reason,
                               last_answer = coalesce(nullif(r.answer, ''), last_answer),
                               first_attempt_at = CASE WHEN r.answer = '' THEN first_attempt_at
                                                       ELSE coalesce(first_attempt_at, \(nowValue)) END,
                               last_attempt_at = CASE WHEN r.answer = '' THEN last_attempt_at ELSE \(nowValue) END
                FROM unnest(\(deadIDs)::text[], \(deadReasons)::text[], \(deadAnswers)::text[], \(deadLeases)::float8[])
                     AS r(id, reason, answer, lease)
                WHERE job.id = r.id AND job.state = 'pending' AND (r.lease = 'NaN' OR job.lease_until = r.lease)
                """)
        }
        // The local development provider's pushes, kept with their outcomes.
        for completion in completions {
            for payload in completion.localPushes {
                try statements.append(
                    """
                    INSERT INTO local_push (platform, token, payload, created_at)
                    VALUES (\(completion.job.destination.rawValue), \(completion.job.token), \(payload), \(nowValue))
                    """)
            }
        }
        // The usual batch, all delivered, is one statement: it commits alone, without the two
        // round trips of BEGIN and COMMIT. (Prepared, it cost PostgreSQL more: ~135 instead of
        // ~95 µs per webhook in paired runs, likely its generic plan for `id = ANY($1)`.)
        if statements.count == 1, deadTokens.isEmpty {
            try await rows(statements[0])
            return
        }
        try await transaction { [statements, deadTokens] connection, logger in
            for statement in statements {
                try await connection.query(statement, logger: logger)
            }
            for dead in deadTokens {
                try await Self.markDead(
                    platform: dead.platform, token: dead.token, reason: dead.reason, now: nowValue,
                    on: connection, logger: logger
                )
            }
        }
    }

    public func release(jobIDs: [String], leasedUntil: Date?) async throws {
        guard !jobIDs.isEmpty else { return }
        if let leasedUntil {
            try await rows(
                """
                UPDATE job SET lease_until = NULL
                WHERE id = ANY(\(jobIDs)) AND state = 'pending' AND lease_until = \(leasedUntil.timeIntervalSince1970)
                """)
        } else {
            try await rows("UPDATE job SET lease_until = NULL WHERE id = ANY(\(jobIDs)) AND state = 'pending'")
        }
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
