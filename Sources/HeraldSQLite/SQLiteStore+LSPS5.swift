import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: LSPS5Store {
    public func lspNodeID(deviceID: String) async throws -> String? {
        try await database.unsafeRead { db in try Self.lspNodeID(deviceID: deviceID, in: db) }
    }

    static func lspNodeID(deviceID: String, in db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT node_id FROM lsps5_lsp WHERE device_id = ?"), arguments: [deviceID])
    }

    /// Sets the device's LSP node id (nil forgets it), inside a registration's or an update's
    /// transaction. The caller checked the key first.
    static func setLSPNodeID(deviceID: String, nodeID: String?, now: Double, in db: Database) throws {
        if let nodeID {
            try db.execute(
                sql: """
                    INSERT INTO lsps5_lsp (device_id, node_id, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (device_id) DO UPDATE SET node_id = excluded.node_id, updated_at = excluded.updated_at
                    """,
                arguments: [deviceID, nodeID, now]
            )
        } else {
            try db.execute(sql: "DELETE FROM lsps5_lsp WHERE device_id = ?", arguments: [deviceID])
        }
    }

    public func rememberLSPS5Signature(deviceID: String, signature: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM lsps5_seen WHERE expires_at <= ?", arguments: [now.timeIntervalSince1970]
            )
            try db.execute(
                sql: """
                    INSERT INTO lsps5_seen (device_id, signature, expires_at) VALUES (?, ?, ?)
                    ON CONFLICT (device_id, signature) DO NOTHING
                    """,
                arguments: [deviceID, signature, expiresAt.timeIntervalSince1970]
            )
            return db.changesCount == 1
        }
    }

    public func forgetLSPS5Signature(deviceID: String, signature: String) async throws {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM lsps5_seen WHERE device_id = ? AND signature = ?", arguments: [deviceID, signature]
            )
        }
    }

    public func lsps5SignatureCount() async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM lsps5_seen") ?? 0 }
    }
}
