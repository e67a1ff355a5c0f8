import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: ReplyStore {
    public func createReply(kind: String, now: Date, expiresAt: Date) async throws -> String {
        // 192 bits: the id alone authorises answering the request.
        let id = Secrets.random(bytes: 24)
        try await rows(
            """
            INSERT INTO pending_reply (id, kind, state, created_at, expires_at)
            VALUES (\(id), \(kind), 'pending', \(now.timeIntervalSince1970), \(expiresAt.timeIntervalSince1970))
            """
        )
        return id
    }

    public func answerReply(
        id: String, answer: ReplyAnswer, now: Date
    ) async throws
        -> ReplyAnswerOutcome
    {
        let nowValue = now.timeIntervalSince1970
        return try await transaction { connection, logger in
            // Locked: of two answers arriving at two processes at once, one is taken.
            let rows = try await connection.query(
                "SELECT state, expires_at FROM pending_reply WHERE id = \(id) FOR UPDATE", logger: logger
            ).collect()
            guard let row = rows.first else { return .unknown }
            let (state, expiresAt) = try row.decode((String, Double).self)
            switch state {
            case "answered": return .alreadyAnswered
            case "pending" where expiresAt > nowValue:
                try await connection.query(
                    """
                    UPDATE pending_reply SET state = 'answered', body = \(answer.body), cache_max_age = \(answer.cacheMaxAge),
                                             answered_at = \(nowValue)
                    WHERE id = \(id)
                    """,
                    logger: logger
                )
                // Sent at commit, to every process listening: the one holding the request
                // completes it at once.
                try await connection.query(
                    "SELECT pg_notify(\(StoreChannel.answeredReplies), \(id))", logger: logger
                )
                return .accepted
            default: return .expired
            }
        }
    }

    public func answeredReplies(ids: [String]) async throws -> [String: ReplyAnswer] {
        guard !ids.isEmpty else { return [:] }
        var answers: [String: ReplyAnswer] = [:]
        for row in try await rows(
            "SELECT id, body, cache_max_age FROM pending_reply WHERE state = 'answered' AND id = ANY(\(ids))"
        ) {
            let (id, body, maxAge) = try row.decode((String, Data?, Int?).self)
            answers[id] = ReplyAnswer(body: body ?? Data(), cacheMaxAge: maxAge)
        }
        return answers
    }

    public func expireReply(id: String, now: Date) async throws -> ReplyAnswer? {
        try await transaction { connection, logger in
            let expired = try await connection.query(
                """
                UPDATE pending_reply SET state = 'expired', expires_at = least(expires_at, \(now.timeIntervalSince1970))
                WHERE id = \(id) AND state = 'pending'
                RETURNING 1
                """,
                logger: logger
            ).collect()
            guard expired.isEmpty else { return nil }
            let rows = try await connection.query(
                "SELECT body, cache_max_age FROM pending_reply WHERE id = \(id) AND state = 'answered'",
                logger: logger
            ).collect()
            guard let row = rows.first else { return nil }
            let (body, maxAge) = try row.decode((Data?, Int?).self)
            return ReplyAnswer(body: body ?? Data(), cacheMaxAge: maxAge)
        }
    }

    public func purgeReplies(expiredBefore before: Date) async throws -> Int {
        try await rows(
            """
            WITH gone AS (DELETE FROM pending_reply WHERE expires_at < \(before.timeIntervalSince1970) RETURNING 1)
            SELECT count(*) FROM gone
            """
        ).first?.decode(Int.self) ?? 0
    }

    public func replyCounts() async throws -> ReplyCounts {
        var byState = try await countsByState(in: "pending_reply")
        return ReplyCounts(
            pending: byState.removeValue(forKey: "pending") ?? 0,
            answered: byState.removeValue(forKey: "answered") ?? 0,
            expired: byState.values.reduce(0, +)
        )
    }

    public func cachedReply(key: String, now: Date) async throws -> ReplyAnswer? {
        let rows = try await rows(
            "SELECT body, max_age FROM reply_cache WHERE key = \(key) AND expires_at > \(now.timeIntervalSince1970)"
        )
        guard let row = rows.first else { return nil }
        let (body, maxAge) = try row.decode((Data, Int).self)
        return ReplyAnswer(body: body, cacheMaxAge: maxAge)
    }

    /// One statement: the budget judged and the answer kept together (two instances caching for
    /// one device at once may each see the other's answer missing: the budget is a bound on
    /// memory, not an exact figure).
    public func cacheReply(key: String, answer: ReplyAnswer, until: Date, budget: CacheBudget?, now: Date) async throws -> Bool {
        let prefix = budget?.prefix ?? ""
        let maxBytes = budget?.maxBytes ?? Int.max
        let kept = try await rows(
            """
            INSERT INTO reply_cache (key, body, max_age, expires_at)
            SELECT \(key), \(answer.body), \(answer.cacheMaxAge ?? 0), \(until.timeIntervalSince1970)
            WHERE (
                SELECT COALESCE(SUM(octet_length(body)), 0) FROM reply_cache
                WHERE starts_with(key, \(prefix)) AND key <> \(key) AND expires_at > \(now.timeIntervalSince1970)
            ) + \(answer.body.count) <= \(maxBytes)
            ON CONFLICT (key) DO UPDATE SET body = excluded.body, max_age = excluded.max_age,
                                            expires_at = excluded.expires_at
            RETURNING 1
            """
        )
        return !kept.isEmpty
    }

    public func removeCachedReplies(prefix: String) async throws {
        // starts_with rather than LIKE: a username may hold '_', which LIKE treats as a wildcard.
        try await rows("DELETE FROM reply_cache WHERE starts_with(key, \(prefix))")
    }

    public func purgeCachedReplies(now: Date) async throws -> Int {
        try await rows(
            """
            WITH gone AS (DELETE FROM reply_cache WHERE expires_at <= \(now.timeIntervalSince1970) RETURNING 1)
            SELECT count(*) FROM gone
            """
        ).first?.decode(Int.self) ?? 0
    }
}

extension PostgresStore: LightningAddressStore {
    public func claimUsername(
        _ username: String, deviceID: String, now: Date
    ) async throws
        -> UsernameClaim
    {
        let nowValue = now.timeIntervalSince1970
        do {
            return try await transaction { connection, logger in
                let owner = try await connection.query(
                    "SELECT device_id FROM lightning_address WHERE username = \(username)", logger: logger
                ).collect().first?.decode(String.self)
                if let owner, owner != deviceID { return .taken }
                let previous = try await connection.query(
                    "SELECT username FROM lightning_address WHERE device_id = \(deviceID) FOR UPDATE",
                    logger: logger
                ).collect().first?.decode(String.self)
                if previous == username { return .unchanged }
                if previous != nil {
                    try await connection.query(
                        "DELETE FROM lightning_address WHERE device_id = \(deviceID)", logger: logger)
                }
                // Another process may have claimed the name since the read above: then it is taken,
                // and the rename above is rolled back.
                let inserted = try await connection.query(
                    """
                    INSERT INTO lightning_address (username, device_id, created_at, updated_at)
                    VALUES (\(username), \(deviceID), \(nowValue), \(nowValue))
                    ON CONFLICT (username) DO NOTHING
                    RETURNING 1
                    """,
                    logger: logger
                ).collect()
                guard !inserted.isEmpty else { throw NameTakenMeanwhile() }
                return .claimed(previous: previous)
            }
        } catch is NameTakenMeanwhile {
            return .taken
        }
    }

    private struct NameTakenMeanwhile: Error {}

    public func releaseUsername(deviceID: String) async throws -> String? {
        try await rows("DELETE FROM lightning_address WHERE device_id = \(deviceID) RETURNING username")
            .first?.decode(String.self)
    }

    public func lightningAddress(username: String) async throws -> LightningAddress? {
        try await rows(
            PostgresQuery(
                unsafeSQL: Self.addressSelect + " WHERE a.username = $1", binds: Self.binds(username))
        )
        .first.flatMap(Self.address(from:))
    }

    public func lightningAddress(deviceID: String) async throws -> LightningAddress? {
        try await rows(
            PostgresQuery(
                unsafeSQL: Self.addressSelect + " WHERE a.device_id = $1", binds: Self.binds(deviceID))
        )
        .first.flatMap(Self.address(from:))
    }

    public func savePayInfo(
        _ info: StoredPayInfo, username: String, deviceID: String, now: Date
    )
        async throws
    {
        let data = try JSONEncoder().encode(info)
        try await rows(
            """
            UPDATE lightning_address SET pay_info = \(data), updated_at = \(now.timeIntervalSince1970)
            WHERE username = \(username) AND device_id = \(deviceID)
            """
        )
    }

    /// The device's columns first, as ``device(from:)`` reads them.
    static let addressSelect = """
        SELECT \(deviceColumns), a.username, a.pay_info
        FROM lightning_address a JOIN device d ON d.id = a.device_id
        """

    static func address(from row: PostgresRow) throws -> LightningAddress? {
        guard let device = try device(from: row) else { return nil }
        let columns = row.makeRandomAccess()
        let info = try columns[7].decode(Data?.self).flatMap {
            try? WireJSON.decode(StoredPayInfo.self, from: $0)
        }
        return LightningAddress(
            username: try columns[6].decode(String.self), device: device, payInfo: info)
    }
}
