import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: DeadLetterStore {
    public func deadLetters(
        matching filter: DeadLetterFilter, limit: Int, after cursor: DeadLetterCursor?
    ) async throws -> DeadLetterPage {
        let reason = filter.reason
        let platform = filter.destination?.rawValue
        let after = cursor?.finishedAt
        let afterID = cursor?.id ?? ""
        let rows = try await rows(
            """
            SELECT id, platform, token, notification_type, last_error, last_answer, attempts, created_at,
                   first_attempt_at, last_attempt_at, finished_at,
                   EXISTS (SELECT 1 FROM dead_token d WHERE d.platform = job.platform AND d.token = job.token)
            FROM job
            WHERE state = 'dead' AND replayed_as IS NULL
              AND (\(reason)::text IS NULL OR last_error = \(reason) OR starts_with(last_error, \(reason) || ':'))
              AND (\(platform)::text IS NULL OR platform = \(platform))
              AND (\(after)::float8 IS NULL OR finished_at < \(after) OR (finished_at = \(after) AND id < \(afterID)))
            ORDER BY finished_at DESC, id DESC LIMIT \(limit + 1)
            """
        )
        let letters = try rows.compactMap(Self.deadLetter(from:))
        guard letters.count > limit else { return DeadLetterPage(letters: letters, next: nil) }
        let page = Array(letters.prefix(limit))
        return DeadLetterPage(letters: page, next: page.last?.position)
    }

    static func deadLetter(from row: PostgresRow) throws -> DeadLetter? {
        let (id, platform, token, type, lastError, answer, attempts, createdAt, first, last, finished, tokenDead) =
            try row.decode(
                (String, String, String, String, String?, String?, Int, Double, Double?, Double?, Double?, Bool).self
            )
        guard let destination = JobDestination(rawValue: platform) else { return nil }
        return DeadLetter(
            id: id, destination: destination, token: token, notificationType: type, lastError: lastError,
            providerAnswer: answer, attempts: attempts, createdAt: PostgresRow.date(createdAt),
            firstAttemptAt: first.map(PostgresRow.date), lastAttemptAt: last.map(PostgresRow.date),
            finishedAt: finished ?? 0, tokenDead: tokenDead
        )
    }

    public func replayDeadLetter(id: String, plan: ReplayPlan) async throws -> ReplayOutcome {
        try await transaction { connection, logger in
            // FOR UPDATE: concurrent replays of one letter queue here, and each one after the
            // first reads the mark the first left.
            let rows = try await connection.query(
                "SELECT \(unescaped: Self.replayColumns) FROM job WHERE id = \(id) AND state = 'dead' FOR UPDATE",
                logger: logger
            ).collect()
            guard let row = rows.first else { return .notFound }
            let letter = try row.decode(LetterColumns.self)
            if let earlier = letter.8 { return .alreadyReplayed(jobID: earlier) }
            if letter.9 { return .tokenDead }
            guard let replayed = try await Self.replay(letter, plan: plan, on: connection, logger: logger) else {
                return .notFound
            }
            return .replayed(jobID: replayed)
        }
    }

    /// A letter's columns as the replays read them: id, platform, token, type, payload,
    /// created_at, expires_at, app, replayed_as, whether its token is dead.
    typealias LetterColumns = (String, String, String, String, Data, Double, Double, String, String?, Bool)
    /// The columns of ``LetterColumns``, in its order.
    static let replayColumns = """
        id, platform, token, notification_type, payload, created_at, expires_at, app, replayed_as,
        EXISTS (SELECT 1 FROM dead_token d WHERE d.platform = job.platform AND d.token = job.token)
        """

    /// Inserts the new job and marks the letter, in the caller's transaction.
    private static func replay(
        _ letter: LetterColumns, plan: ReplayPlan, on connection: PostgresConnection, logger: Logger
    ) async throws -> String? {
        guard let destination = JobDestination(rawValue: letter.1) else { return nil }
        let new = plan.newJob(
            destination: destination, token: letter.2, notificationType: letter.3, payload: letter.4,
            createdAt: PostgresRow.date(letter.5), expiresAt: PostgresRow.date(letter.6), app: letter.7
        )
        let now = plan.now.timeIntervalSince1970
        try await connection.query(
            """
            INSERT INTO job (id, platform, token, notification_type, payload, idempotency_key, state,
                             attempts, next_attempt_at, lease_until, created_at, expires_at, app)
            VALUES (\(new.id), \(destination.rawValue), \(new.token), \(new.notificationType), \(new.payload), NULL,
                    'pending', 0, \(now), NULL, \(now), \(new.expiresAt.timeIntervalSince1970), \(new.app))
            """,
            logger: logger
        )
        try await connection.query(
            "UPDATE job SET replayed_as = \(new.id), replayed_at = \(now) WHERE id = \(letter.0)", logger: logger
        )
        return new.id
    }

    public func replayDeadLetters(matching filter: DeadLetterFilter, limit: Int, plan: ReplayPlan) async throws -> BulkReplay {
        let reason = filter.reason
        let platform = filter.destination?.rawValue
        return try await transaction { connection, logger in
            // SKIP LOCKED: a concurrent replay holds its letters; this one takes others. A letter
            // it committed as replayed no longer matches `replayed_as IS NULL` when re-read here.
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.replayColumns)
                FROM job
                WHERE state = 'dead' AND replayed_as IS NULL
                  AND (\(reason)::text IS NULL OR last_error = \(reason) OR starts_with(last_error, \(reason) || ':'))
                  AND (\(platform)::text IS NULL OR platform = \(platform))
                ORDER BY finished_at, id LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
                """,
                logger: logger
            ).collect()
            var result = BulkReplay(jobIDs: [], skippedTokenDead: 0)
            for row in rows {
                let letter = try row.decode(LetterColumns.self)
                if letter.9 {
                    result.skippedTokenDead += 1
                } else if let id = try await Self.replay(letter, plan: plan, on: connection, logger: logger) {
                    result.jobIDs.append(id)
                }
            }
            return result
        }
    }

    public func purgeDeadLetter(id: String) async throws -> Bool {
        try await !rows("DELETE FROM job WHERE id = \(id) AND state = 'dead' RETURNING 1").isEmpty
    }

    public func purgeDeadLetters(matching filter: DeadLetterFilter) async throws -> DeadLetterPurge {
        let reason = filter.reason
        let platform = filter.destination?.rawValue
        return try await rows(
            """
            WITH gone AS (
                DELETE FROM job
                WHERE state = 'dead'
                  AND (\(reason)::text IS NULL OR last_error = \(reason) OR starts_with(last_error, \(reason) || ':'))
                  AND (\(platform)::text IS NULL OR platform = \(platform))
                RETURNING replayed_as)
            SELECT count(*), count(replayed_as) FROM gone
            """
        ).first.map { try $0.decode((Int, Int).self) }.map { DeadLetterPurge(purged: $0.0, replayed: $0.1) }
            ?? DeadLetterPurge(purged: 0, replayed: 0)
    }

    public func outboxSummary(now: Date) async throws -> OutboxSummary {
        var summary = OutboxSummary(total: OutboxCounts(), byDestination: [:], oldestDueAt: nil, deadLetters: 0, deadTokens: 0)
        for row in try await rows(
            """
            SELECT platform, app, coalesce(lease_until >= \(now.timeIntervalSince1970), false), attempts > 0, count(*)
            FROM job WHERE state = 'pending' GROUP BY 1, 2, 3, 4
            """
        ) {
            let (platform, app, leased, tried, count) = try row.decode((String, String, Bool, Bool, Int).self)
            guard let destination = JobDestination(rawValue: platform) else { continue }
            summary.add(destination: destination, app: app, leased: leased, tried: tried, count: count)
        }
        let totals = try await rows(
            """
            SELECT (SELECT min(next_attempt_at) FROM job WHERE state = 'pending'),
                   (SELECT count(*) FROM job WHERE state = 'dead' AND replayed_as IS NULL),
                   (SELECT count(*) FROM dead_token)
            """
        )
        if let row = totals.first {
            let (oldest, letters, tokens) = try row.decode((Double?, Int, Int).self)
            summary.oldestDueAt = oldest.map(PostgresRow.date)
            summary.deadLetters = letters
            summary.deadTokens = tokens
        }
        return summary
    }
}
