import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: ZapStore {
    public func saveZap(_ zap: StoredZap) async throws {
        try await rows(
            """
            INSERT INTO zap_request (payment_hash, device_id, request, bolt11, created_at)
            VALUES (\(zap.paymentHash), \(zap.deviceID), \(zap.request), \(zap.bolt11), \(zap.createdAt.timeIntervalSince1970))
            ON CONFLICT (payment_hash) DO NOTHING
            """
        )
    }

    public func zap(paymentHash: String) async throws -> StoredZap? {
        let rows = try await rows(
            "SELECT payment_hash, device_id, request, bolt11, created_at FROM zap_request WHERE payment_hash = \(paymentHash)")
        guard let row = rows.first else { return nil }
        let (hash, device, request, bolt11, created) = try row.decode((String, String, String, String, Double).self)
        return StoredZap(paymentHash: hash, deviceID: device, request: request, bolt11: bolt11, createdAt: Date(timeIntervalSince1970: created))
    }

    public func purgeZaps(before cutoff: Date) async throws -> Int {
        let rows = try await rows("DELETE FROM zap_request WHERE created_at < \(cutoff.timeIntervalSince1970) RETURNING 1")
        return rows.count
    }
}
