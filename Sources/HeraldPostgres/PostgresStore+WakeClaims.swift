import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: WakeClaimStore {
    public func claimWake(
        repeatKey: String, idempotencyKey: String?, now: Date, window: TimeInterval
    ) async throws -> WakeClaimOutcome {
        let nowValue = now.timeIntervalSince1970
        // One statement: of two instances claiming at once, the row lock lets one win.
        let claimed = try await rows(
            """
            INSERT INTO wake_claim AS c (repeat_key, claimed_at, idempotency_key)
            VALUES (\(repeatKey), \(nowValue), \(idempotencyKey))
            ON CONFLICT (repeat_key) DO UPDATE SET claimed_at = excluded.claimed_at, idempotency_key = excluded.idempotency_key
            WHERE c.claimed_at <= \(nowValue - window)
            RETURNING 1
            """
        )
        if !claimed.isEmpty {
            if UInt8.random(in: 0...255) == 0 {
                try await rows("DELETE FROM wake_claim WHERE claimed_at < \(nowValue - window)")
            }
            return .push
        }
        let existing = try await rows("SELECT idempotency_key FROM wake_claim WHERE repeat_key = \(repeatKey)").first
        if let idempotencyKey, let key = try existing?.decode(String?.self), key == idempotencyKey { return .replay }
        return .recentlyWoken
    }

    public func releaseWake(repeatKey: String, at: Date) async throws {
        try await rows("DELETE FROM wake_claim WHERE repeat_key = \(repeatKey) AND claimed_at = \(at.timeIntervalSince1970)")
    }
}
