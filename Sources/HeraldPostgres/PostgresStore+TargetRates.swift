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
}
