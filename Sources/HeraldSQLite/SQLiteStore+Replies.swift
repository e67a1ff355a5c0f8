import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: ReplyStore {
    public func createReply(kind: String, now: Date, expiresAt: Date) async throws -> String {
        // 192 bits: the id alone authorises answering the request.
        let id = Secrets.random(bytes: 24)
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO pending_reply (id, kind, state, created_at, expires_at)
                    VALUES (?, ?, 'pending', ?, ?)
                    """,
                arguments: [id, kind, now.timeIntervalSince1970, expiresAt.timeIntervalSince1970]
            )
        }
        return id
    }

    public func answerReply(id: String, answer: ReplyAnswer, now: Date) async throws -> ReplyAnswerOutcome {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT state, expires_at FROM pending_reply WHERE id = ?", arguments: [id]
                )
            else { return .unknown }
            switch row["state"] as String {
            case "answered": return .alreadyAnswered
            case "pending" where (row["expires_at"] as Double) > nowValue:
                try db.execute(
                    sql: """
                        UPDATE pending_reply SET state = 'answered', body = ?, cache_max_age = ?, answered_at = ?
                        WHERE id = ?
                        """,
                    arguments: [answer.body, answer.cacheMaxAge, nowValue, id]
                )
                return .accepted
            default: return .expired
            }
        }
    }

    public func answeredReplies(ids: [String]) async throws -> [String: ReplyAnswer] {
        guard !ids.isEmpty else { return [:] }
        return try await database.read { db in
            var answers: [String: ReplyAnswer] = [:]
            // SQLite caps bound parameters; 500 at a time stays well under it.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchAll(
                    db,
                    sql: "SELECT id, body, cache_max_age FROM pending_reply WHERE state = 'answered' AND id IN (\(marks))",
                    arguments: StatementArguments(chunk)
                )
                for row in rows {
                    answers[row["id"]] = ReplyAnswer(body: row["body"] ?? Data(), cacheMaxAge: row["cache_max_age"])
                }
            }
            return answers
        }
    }

    public func expireReply(id: String, now: Date) async throws -> ReplyAnswer? {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE pending_reply SET state = 'expired', expires_at = min(expires_at, ?) WHERE id = ? AND state = 'pending'",
                arguments: [now.timeIntervalSince1970, id]
            )
            guard db.changesCount == 0,
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT body, cache_max_age FROM pending_reply WHERE id = ? AND state = 'answered'",
                    arguments: [id]
                )
            else { return nil }
            return ReplyAnswer(body: row["body"] ?? Data(), cacheMaxAge: row["cache_max_age"])
        }
    }

    public func purgeReplies(expiredBefore before: Date) async throws -> Int {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM pending_reply WHERE expires_at < ?", arguments: [before.timeIntervalSince1970]
            )
            return db.changesCount
        }
    }

    public func replyCounts() async throws -> ReplyCounts {
        try await database.read { db in
            var byState = try Self.countsByState(in: "pending_reply", db)
            return ReplyCounts(
                pending: byState.removeValue(forKey: "pending") ?? 0,
                answered: byState.removeValue(forKey: "answered") ?? 0,
                expired: byState.values.reduce(0, +)
            )
        }
    }

    public func cachedReply(key: String, now: Date) async throws -> ReplyAnswer? {
        try await database.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT body, max_age FROM reply_cache WHERE key = ? AND expires_at > ?",
                arguments: [key, now.timeIntervalSince1970]
            ).map { ReplyAnswer(body: $0["body"], cacheMaxAge: $0["max_age"]) }
        }
    }

    public func cacheReply(key: String, answer: ReplyAnswer, until: Date, budget: CacheBudget?, now: Date) async throws -> Bool {
        try await database.write { db in
            if let budget {
                // What the owner keeps fresh now, the answer this one would replace left out.
                let held =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT COALESCE(SUM(length(body)), 0) FROM reply_cache
                            WHERE substr(key, 1, ?) = ? AND key <> ? AND expires_at > ?
                            """,
                        arguments: [budget.prefix.utf8.count, budget.prefix, key, now.timeIntervalSince1970]) ?? 0
                guard held + answer.body.count <= budget.maxBytes else { return false }
            }
            try db.execute(
                sql: """
                    INSERT INTO reply_cache (key, body, max_age, expires_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET body = excluded.body, max_age = excluded.max_age,
                                                    expires_at = excluded.expires_at
                    """,
                arguments: [key, answer.body, answer.cacheMaxAge ?? 0, until.timeIntervalSince1970]
            )
            return true
        }
    }

    public func removeCachedReplies(prefix: String) async throws {
        try await database.write { db in
            // substr rather than LIKE: a username may hold '_', which LIKE treats as a wildcard.
            try db.execute(
                sql: "DELETE FROM reply_cache WHERE substr(key, 1, ?) = ?",
                arguments: [prefix.utf8.count, prefix]
            )
        }
    }

    public func purgeCachedReplies(now: Date) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM reply_cache WHERE expires_at <= ?", arguments: [now.timeIntervalSince1970])
            return db.changesCount
        }
    }
}

extension SQLiteStore: LightningAddressStore {
    public func claimUsername(_ username: String, deviceID: String, now: Date) async throws -> UsernameClaim {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            let owner = try String.fetchOne(
                db, sql: "SELECT device_id FROM lightning_address WHERE username = ?", arguments: [username]
            )
            if let owner, owner != deviceID { return .taken }
            let previous = try String.fetchOne(
                db, sql: "SELECT username FROM lightning_address WHERE device_id = ?", arguments: [deviceID]
            )
            if previous == username { return .unchanged }
            if previous != nil {
                try db.execute(sql: "DELETE FROM lightning_address WHERE device_id = ?", arguments: [deviceID])
            }
            try db.execute(
                sql: """
                    INSERT INTO lightning_address (username, device_id, created_at, updated_at) VALUES (?, ?, ?, ?)
                    """,
                arguments: [username, deviceID, nowValue, nowValue]
            )
            return .claimed(previous: previous)
        }
    }

    public func releaseUsername(deviceID: String) async throws -> String? {
        try await database.write { db in
            try String.fetchOne(
                db, sql: "DELETE FROM lightning_address WHERE device_id = ? RETURNING username", arguments: [deviceID]
            )
        }
    }

    public func lightningAddress(username: String) async throws -> LightningAddress? {
        try await database.read { db in
            try Row.fetchOne(db, sql: Self.addressSelect + " WHERE a.username = ?", arguments: [username])
                .flatMap(Self.address(from:))
        }
    }

    public func lightningAddress(deviceID: String) async throws -> LightningAddress? {
        try await database.read { db in
            try Row.fetchOne(db, sql: Self.addressSelect + " WHERE a.device_id = ?", arguments: [deviceID])
                .flatMap(Self.address(from:))
        }
    }

    public func savePayInfo(_ info: StoredPayInfo, username: String, deviceID: String, now: Date) async throws {
        let data = try JSONEncoder().encode(info)
        try await database.write { db in
            try db.execute(
                sql: "UPDATE lightning_address SET pay_info = ?, updated_at = ? WHERE username = ? AND device_id = ?",
                arguments: [data, now.timeIntervalSince1970, username, deviceID]
            )
        }
    }

    static let addressSelect = """
        SELECT a.username, a.pay_info, \(deviceColumns)
        FROM lightning_address a JOIN device d ON d.id = a.device_id
        """

    static func address(from row: Row) -> LightningAddress? {
        guard let device = device(from: row) else { return nil }
        let info = (row["pay_info"] as Data?).flatMap { try? WireJSON.decode(StoredPayInfo.self, from: $0) }
        return LightningAddress(username: row["username"], device: device, payInfo: info)
    }
}
