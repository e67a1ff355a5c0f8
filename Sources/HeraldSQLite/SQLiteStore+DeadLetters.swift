import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: DeadLetterStore {
    /// The columns ``deadLetter(from:)`` reads, with whether the token is marked dead.
    private static let letterColumns = """
        id, platform, token, notification_type, last_error, last_answer, attempts, created_at,
        first_attempt_at, last_attempt_at, finished_at,
        EXISTS (SELECT 1 FROM dead_token d WHERE d.platform = job.platform AND d.token = job.token) AS token_dead
        """

    /// The WHERE terms of a filter (after `state = 'dead'`), with their arguments.
    private static func conditions(_ filter: DeadLetterFilter) -> (sql: String, arguments: StatementArguments) {
        var sql = ""
        var arguments: StatementArguments = []
        if let reason = filter.reason {
            sql += " AND (last_error = ? OR substr(last_error, 1, ?) = ?)"
            arguments += [reason, reason.utf8.count + 1, reason + ":"]
        }
        if let destination = filter.destination {
            sql += " AND platform = ?"
            arguments += [destination.rawValue]
        }
        return (sql, arguments)
    }

    public func deadLetters(
        matching filter: DeadLetterFilter, limit: Int, after cursor: DeadLetterCursor?
    ) async throws -> DeadLetterPage {
        let (terms, filterArguments) = Self.conditions(filter)
        return try await database.read { db in
            var sql = "SELECT \(Self.letterColumns) FROM job WHERE state = 'dead' AND replayed_as IS NULL" + terms
            var arguments = filterArguments
            if let cursor {
                sql += " AND (finished_at < ? OR (finished_at = ? AND id < ?))"
                arguments += [cursor.finishedAt, cursor.finishedAt, cursor.id]
            }
            sql += " ORDER BY finished_at DESC, id DESC LIMIT ?"
            arguments += [limit + 1]
            let letters = try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap(Self.deadLetter(from:))
            return DeadLetterPage.cut(letters, limit: limit)
        }
    }

    static func deadLetter(from row: Row) -> DeadLetter? {
        guard let destination = JobDestination(rawValue: row["platform"]) else { return nil }
        return DeadLetter(
            id: row["id"], destination: destination, token: row["token"], notificationType: row["notification_type"],
            lastError: row["last_error"], providerAnswer: row["last_answer"], attempts: row["attempts"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            firstAttemptAt: (row["first_attempt_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastAttemptAt: (row["last_attempt_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            finishedAt: row["finished_at"] ?? 0,
            tokenDead: row["token_dead"]
        )
    }

    public func replayDeadLetter(id: String, plan: ReplayPlan) async throws -> ReplayOutcome {
        try await database.write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT \(Self.replayColumns) FROM job WHERE id = ? AND state = 'dead'",
                    arguments: [id]
                )
            else { return .notFound }
            if let earlier = row["replayed_as"] as String? { return .alreadyReplayed(jobID: earlier) }
            if row["token_dead"] as Bool { return .tokenDead }
            guard let replayed = try Self.replay(id: id, row: row, plan: plan, in: db) else { return .notFound }
            return .replayed(jobID: replayed)
        }
    }

    /// The columns a replay reads: what ``replay(id:row:plan:in:)`` copies, the mark of an earlier
    /// replay, and whether the token is marked dead.
    private static let replayColumns = """
        id, platform, token, notification_type, payload, created_at, expires_at, app, replayed_as,
        EXISTS (SELECT 1 FROM dead_token d WHERE d.platform = job.platform AND d.token = job.token) AS token_dead
        """

    /// Inserts the new job and marks the letter; the caller's write transaction makes the two one.
    private static func replay(id: String, row: Row, plan: ReplayPlan, in db: Database) throws -> String? {
        guard let destination = JobDestination(rawValue: row["platform"]) else { return nil }
        let new = plan.newJob(
            destination: destination, token: row["token"], notificationType: row["notification_type"],
            payload: row["payload"], createdAt: Date(timeIntervalSince1970: row["created_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]), app: row["app"]
        )
        let now = plan.now.timeIntervalSince1970
        try db.execute(
            sql: """
                INSERT INTO job (id, platform, token, notification_type, payload, idempotency_key, state,
                                 attempts, next_attempt_at, lease_until, created_at, expires_at, app)
                VALUES (?, ?, ?, ?, ?, NULL, 'pending', 0, ?, NULL, ?, ?, ?)
                """,
            arguments: [
                new.id, destination.rawValue, new.token, new.notificationType, new.payload, now, now,
                new.expiresAt.timeIntervalSince1970, new.app,
            ]
        )
        try db.execute(
            sql: "UPDATE job SET replayed_as = ?, replayed_at = ? WHERE id = ?", arguments: [new.id, now, id]
        )
        return new.id
    }

    public func replayDeadLetters(matching filter: DeadLetterFilter, limit: Int, plan: ReplayPlan) async throws -> BulkReplay {
        let (terms, arguments) = Self.conditions(filter)
        return try await database.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.replayColumns) FROM job WHERE state = 'dead' AND replayed_as IS NULL\(terms)
                    ORDER BY finished_at, id LIMIT ?
                    """,
                arguments: arguments + [limit]
            )
            var result = BulkReplay(jobIDs: [], skippedTokenDead: 0)
            for row in rows {
                if row["token_dead"] as Bool {
                    result.skippedTokenDead += 1
                } else if let id = try Self.replay(id: row["id"], row: row, plan: plan, in: db) {
                    result.jobIDs.append(id)
                }
            }
            return result
        }
    }

    public func purgeDeadLetter(id: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM job WHERE id = ? AND state = 'dead'", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func purgeDeadLetters(matching filter: DeadLetterFilter) async throws -> DeadLetterPurge {
        let (terms, arguments) = Self.conditions(filter)
        return try await database.write { db in
            let replayed =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM job WHERE state = 'dead' AND replayed_as IS NOT NULL" + terms, arguments: arguments)
                ?? 0
            try db.execute(sql: "DELETE FROM job WHERE state = 'dead'" + terms, arguments: arguments)
            return DeadLetterPurge(purged: db.changesCount, replayed: replayed)
        }
    }

    public func outboxSummary(now: Date) async throws -> OutboxSummary {
        try await database.read { db in
            var summary = OutboxSummary(total: OutboxCounts(), byDestination: [:], oldestDueAt: nil, deadLetters: 0, deadTokens: 0)
            let groups = try Row.fetchAll(
                db,
                sql: """
                    SELECT platform, app, lease_until IS NOT NULL AND lease_until >= ? AS leased, attempts > 0 AS tried,
                           count(*) AS n
                    FROM job WHERE state = 'pending' GROUP BY 1, 2, 3, 4
                    """,
                arguments: [now.timeIntervalSince1970]
            )
            for row in groups {
                guard let destination = JobDestination(rawValue: row["platform"]) else { continue }
                summary.add(destination: destination, app: row["app"], leased: row["leased"], tried: row["tried"], count: row["n"])
            }
            summary.oldestDueAt = try Double.fetchOne(
                db, sql: "SELECT min(next_attempt_at) FROM job WHERE state = 'pending'"
            ).map(Date.init(timeIntervalSince1970:))
            summary.deadLetters =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM job WHERE state = 'dead' AND replayed_as IS NULL") ?? 0
            summary.deadTokens = try Int.fetchOne(db, sql: "SELECT count(*) FROM dead_token") ?? 0
            return summary
        }
    }
}

extension DeadLetterPage {
    /// A page from up to `limit + 1` letters read: the extra one only says another page follows.
    static func cut(_ letters: [DeadLetter], limit: Int) -> DeadLetterPage {
        guard letters.count > limit else { return DeadLetterPage(letters: letters, next: nil) }
        let page = Array(letters.prefix(limit))
        return DeadLetterPage(letters: page, next: page.last?.position)
    }
}
