import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: IdentityStore {
    public func identities(deviceID: String) async throws -> [String] {
        try await database.read { db in try Self.identities(deviceID: deviceID, in: db) }
    }

    static func identities(deviceID: String, in db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT identity FROM device_identity WHERE device_id = ? ORDER BY identity", arguments: [deviceID])
    }

    /// Replaces the device's identities (empty forgets them), inside a registration's or an
    /// update's transaction. The caller checked the proofs first.
    static func setIdentities(deviceID: String, identities: [String], now: Double, in db: Database) throws {
        try db.execute(sql: "DELETE FROM device_identity WHERE device_id = ?", arguments: [deviceID])
        for identity in Set(identities) {
            try db.execute(
                sql: "INSERT INTO device_identity (identity, device_id, created_at) VALUES (?, ?, ?)",
                arguments: [identity, deviceID, now])
        }
    }

    public func devices(identity: String) async throws -> [WebhookTokenResolution] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.deviceColumns), \(Self.deviceTokenIsDead) AS dead
                    FROM device_identity i JOIN device d ON d.id = i.device_id
                    WHERE i.identity = ? ORDER BY d.id
                    """,
                arguments: [identity]
            ).compactMap { row in
                Self.device(from: row).map { WebhookTokenResolution(device: $0, isDead: row["dead"]) }
            }
        }
    }
}
