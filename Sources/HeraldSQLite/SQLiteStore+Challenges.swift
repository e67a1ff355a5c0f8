import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: DeviceChallengeStore {
    /// Starts (or restarts, after a token change) the device's challenge, inside a
    /// registration's or an update's transaction: unconfirmed until the code whose SHA-256 is
    /// `codeHash` comes back.
    static func setChallenge(deviceID: String, codeHash: Data, now: Double, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO device_challenge (device_id, code_hash, created_at, confirmed_at) VALUES (?, ?, ?, NULL)
                ON CONFLICT (device_id) DO UPDATE SET code_hash = excluded.code_hash, created_at = excluded.created_at,
                    confirmed_at = NULL
                """,
            arguments: [deviceID, codeHash, now])
    }

    public func confirmChallenge(deviceID: String, codeHash: Data, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE device_challenge SET confirmed_at = COALESCE(confirmed_at, ?) WHERE device_id = ? AND code_hash = ?
                    """,
                arguments: [now.timeIntervalSince1970, deviceID, codeHash])
            return db.changesCount == 1
        }
    }

    public func isUnconfirmed(deviceID: String) async throws -> Bool {
        try await database.unsafeRead { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM device_challenge WHERE device_id = ? AND confirmed_at IS NULL)"),
                arguments: [deviceID]) ?? false
        }
    }
}
