import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: TargetRateStore {
    public func takeTargetPushes(
        keys: [String], capacity: Double, refillPerSecond: Double, now: Date
    ) async throws -> TimeInterval? {
        // Sorted: concurrent takes lock shared keys in one order, so they cannot deadlock.
        let keys = Array(Set(keys)).sorted()
        guard !keys.isEmpty else { return nil }
        let nowValue = now.timeIntervalSince1970
        if keys.count == 1 {
            // Batched with the webhooks to other targets that come meanwhile. Their allowance is
            // the process's one setting, so the query's capacity and refill are every caller's.
            return try await targetTakes.answer(keys[0]) { keys in
                try await self.takeTargetPushes(distinct: keys, capacity: capacity, refillPerSecond: refillPerSecond, now: nowValue)
            }.wait
        }
        return try await transaction { connection, logger in
            try await connection.query(
                """
                INSERT INTO target_rate (key, tokens, updated_at)
                SELECT k, \(capacity), \(nowValue) FROM unnest(\(keys)::text[]) AS k
                ON CONFLICT (key) DO NOTHING
                """,
                logger: logger
            )
            var tokens: [Double] = []
            var wait: Double = 0
            for try await (_, stored, updated) in try await connection.query(
                "SELECT key, tokens, updated_at FROM target_rate WHERE key = ANY(\(keys)) ORDER BY key FOR UPDATE",
                logger: logger
            ).decode((String, Double, Double).self) {
                let refilled = min(capacity, stored + max(0, nowValue - updated) * refillPerSecond)
                if refilled < 1 { wait = max(wait, (1 - refilled) / refillPerSecond) }
                tokens.append(refilled)
            }
            guard wait == 0 else { return wait }
            try await connection.query(
                """
                UPDATE target_rate SET tokens = t.tokens - 1, updated_at = \(nowValue)
                FROM unnest(\(keys)::text[], \(tokens)::double precision[]) AS t(key, tokens)
                WHERE target_rate.key = t.key
                """,
                logger: logger
            )
            // Now and then, forget buckets that have refilled: they say nothing a new row
            // would not (full), and the table stays as small as the set of busy devices.
            if UInt8.random(in: 0...255) == 0 {
                try await connection.query(
                    "DELETE FROM target_rate WHERE updated_at < \(nowValue - capacity / refillPerSecond)", logger: logger)
            }
            return nil
        }
    }

    /// One push from each of several distinct keys' buckets, each granted or refused on its own:
    /// a webhook's target, or a batch of them, one upsert for all and no transaction. The row is
    /// refilled and taken from in the upsert itself, only when it has a push to give; otherwise
    /// nothing is written and a read says how long to wait. Measured on the scale-out bench: the
    /// three-statement transaction doubled PostgreSQL's CPU per webhook.
    func takeTargetPushes(
        distinct keys: [String], capacity: Double, refillPerSecond: Double, now: Double
    ) async throws -> [String: TargetTake] {
        // Sorted: instances taking shared keys at once lock them in one order.
        var refused = keys.sorted()
        var answers: [String: TargetTake] = [:]
        // A bucket refilled between the take and the read is tried again rather than granted
        // without taking.
        for _ in 0..<3 where !refused.isEmpty {
            let taken = Set(
                try await rows(TakeManyStatement(keys: refused, capacity: capacity, refillPerSecond: refillPerSecond, now: now)))
            var again: [String] = []
            for key in refused {
                if taken.contains(key) {
                    answers[key] = TargetTake(wait: nil)
                } else if let wait = try await waitAfterRefusal(key: key, capacity: capacity, refillPerSecond: refillPerSecond, now: now) {
                    answers[key] = TargetTake(wait: wait)
                } else {
                    again.append(key)
                }
            }
            refused = again
        }
        for key in refused { answers[key] = TargetTake(wait: 1 / refillPerSecond) }
        return answers
    }

    /// How long a refused key's bucket needs for its next push; nil when it has one after all
    /// (refilled since, or its row purged), to take again.
    private func waitAfterRefusal(key: String, capacity: Double, refillPerSecond: Double, now: Double) async throws
        -> TimeInterval?
    {
        guard let row = try await rows("SELECT tokens, updated_at FROM target_rate WHERE key = \(key)").first else { return nil }
        let (tokens, updated) = try row.decode((Double, Double).self)
        let refilled = min(capacity, tokens + max(0, now - updated) * refillPerSecond)
        return refilled < 1 ? (1 - refilled) / refillPerSecond : nil
    }
}

/// What a batched take answered one key: nil when a push was taken, else the seconds to wait.
struct TargetTake: Sendable {
    var wait: TimeInterval?
}

extension PostgresStore {
    /// One push taken from each of several distinct keys' buckets, each refilled first: the
    /// keys whose push was taken (an empty bucket gives no row). Prepared: every webhook, or
    /// batch of them, runs it.
    struct TakeManyStatement: PostgresPreparedStatement {
        static let sql = """
            INSERT INTO target_rate AS r (key, tokens, updated_at) SELECT k, $2 - 1, $4 FROM unnest($1::text[]) AS k
            ON CONFLICT (key) DO UPDATE
            SET tokens = least($2, r.tokens + greatest(0, $4 - r.updated_at) * $3) - 1,
                updated_at = $4
            WHERE least($2, r.tokens + greatest(0, $4 - r.updated_at) * $3) >= 1
            RETURNING r.key
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .float8, .float8, .float8]
        var keys: [String]
        var capacity: Double
        var refillPerSecond: Double
        var now: Double

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(keys)
            bindings.append(capacity)
            bindings.append(refillPerSecond)
            bindings.append(now)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
    }
}
