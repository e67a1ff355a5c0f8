import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: ZapStore {
    public func saveZap(_ zap: StoredZap) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO zap_request (payment_hash, device_id, request, bolt11, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (payment_hash) DO NOTHING
                    """,
                arguments: [zap.paymentHash, zap.deviceID, zap.request, zap.bolt11, zap.createdAt.timeIntervalSince1970]
            )
        }
    }

    public func zap(paymentHash: String) async throws -> StoredZap? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT payment_hash, device_id, request, bolt11, created_at FROM zap_request WHERE payment_hash = ?",
                arguments: [paymentHash]
            ).map { row in
                StoredZap(
                    paymentHash: row["payment_hash"], deviceID: row["device_id"], request: row["request"], bolt11: row["bolt11"],
                    createdAt: Date(timeIntervalSince1970: row["created_at"]))
            }
        }
    }

    public func purgeZaps(before cutoff: Date) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM zap_request WHERE created_at < ?", arguments: [cutoff.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
