import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: LSPS5Store {
    public func lspNodeID(deviceID: String) async throws -> String? {
        try await rows(Self.lspNodeID(deviceID: deviceID)).first?.decode(String.self)
    }

    static func lspNodeID(deviceID: String) -> PostgresQuery {
        "SELECT node_id FROM lsps5_lsp WHERE device_id = \(deviceID)"
    }

    /// Sets the device's LSP node id (nil forgets it), in an update's transaction. The caller
    /// checked the key first.
    static func setLSPNodeID(deviceID: String, nodeID: String?, now: Double) -> PostgresQuery {
        guard let nodeID else { return "DELETE FROM lsps5_lsp WHERE device_id = \(deviceID)" }
        return """
            INSERT INTO lsps5_lsp (device_id, node_id, updated_at) VALUES (\(deviceID), \(nodeID), \(now))
            ON CONFLICT (device_id) DO UPDATE SET node_id = excluded.node_id, updated_at = excluded.updated_at
            """
    }

    /// One statement: a bounded prune of expired signatures, skipping rows another instance is
    /// pruning (no waits, no deadlocks between instances), then the insert. Two instances
    /// inserting the same signature meet at the primary key: one row comes back to one of them.
    public func rememberLSPS5Signature(deviceID: String, signature: String, expiresAt: Date, now: Date) async throws -> Bool {
        let rows = try await rows(
            """
            WITH pruned AS (
                DELETE FROM lsps5_seen WHERE ctid IN (
                    SELECT ctid FROM lsps5_seen WHERE expires_at <= \(now.timeIntervalSince1970)
                    LIMIT 256 FOR UPDATE SKIP LOCKED
                )
            )
            INSERT INTO lsps5_seen (device_id, signature, expires_at)
            VALUES (\(deviceID), \(signature), \(expiresAt.timeIntervalSince1970))
            ON CONFLICT (device_id, signature) DO NOTHING
            RETURNING 1
            """
        )
        return !rows.isEmpty
    }

    public func forgetLSPS5Signature(deviceID: String, signature: String) async throws {
        try await rows("DELETE FROM lsps5_seen WHERE device_id = \(deviceID) AND signature = \(signature)")
    }

    public func lsps5SignatureCount() async throws -> Int {
        let rows = try await rows("SELECT count(*) FROM lsps5_seen")
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
}
