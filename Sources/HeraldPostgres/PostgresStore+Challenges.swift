import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: DeviceChallengeStore {
    /// Restarts the device's challenge after a token change, in an update's transaction:
    /// unconfirmed until the code whose SHA-256 is `codeHash` comes back.
    static func setChallenge(deviceID: String, codeHash: Data, now: Double) throws -> PostgresQuery {
        try """
        INSERT INTO device_challenge (device_id, code_hash, created_at, confirmed_at)
        VALUES (\(deviceID), \(codeHash), \(now), NULL)
        ON CONFLICT (device_id) DO UPDATE SET code_hash = excluded.code_hash, created_at = excluded.created_at,
            confirmed_at = NULL
        """
    }

    public func confirmChallenge(deviceID: String, codeHash: Data, now: Date) async throws -> Bool {
        let rows = try await rows(
            """
            UPDATE device_challenge SET confirmed_at = COALESCE(confirmed_at, \(now.timeIntervalSince1970))
            WHERE device_id = \(deviceID) AND code_hash = \(codeHash) RETURNING 1
            """
        )
        return !rows.isEmpty
    }

    public func isUnconfirmed(deviceID: String) async throws -> Bool {
        let rows = try await rows(
            "SELECT EXISTS (SELECT 1 FROM device_challenge WHERE device_id = \(deviceID) AND confirmed_at IS NULL)")
        return try rows.first?.decode(Bool.self) ?? false
    }
}
