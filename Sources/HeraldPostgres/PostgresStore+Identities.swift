import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: IdentityStore {
    public func identities(deviceID: String) async throws -> [String] {
        try await rows(Self.identities(deviceID: deviceID)).map { try $0.decode(String.self) }
    }

    static func identities(deviceID: String) -> PostgresQuery {
        "SELECT identity FROM device_identity WHERE device_id = \(deviceID) ORDER BY identity"
    }

    /// Replaces the device's identities (empty forgets them), in an update's transaction. The
    /// caller checked the proofs first. The rows it deletes and inserts are disjoint: one
    /// statement may not touch a row twice.
    static func setIdentities(deviceID: String, identities: [String], now: Double) -> PostgresQuery {
        let unique = Array(Set(identities))
        return """
            WITH removed AS (
                DELETE FROM device_identity WHERE device_id = \(deviceID) AND NOT (identity = ANY(\(unique)::text[]))
            )
            INSERT INTO device_identity (identity, device_id, created_at)
            SELECT unnest(\(unique)::text[]), \(deviceID), \(now)
            ON CONFLICT (identity, device_id) DO NOTHING
            """
    }

    public func devices(identity: String) async throws -> [WebhookTokenResolution] {
        try await rows(
            """
            SELECT \(unescaped: Self.deviceColumns), \(unescaped: Self.deviceTokenIsDead)
            FROM device_identity i JOIN device d ON d.id = i.device_id
            WHERE i.identity = \(identity) ORDER BY d.id
            """
        ).compactMap { row in
            try Self.device(from: row).map { WebhookTokenResolution(device: $0, isDead: try row.makeRandomAccess()[6].decode(Bool.self)) }
        }
    }
}
