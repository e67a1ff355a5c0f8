import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: Bip353Store {
    public func putBip353Records(_ records: [Bip353Record]) async throws {
        let now = Date().timeIntervalSince1970
        try await transaction { connection, logger in
            for record in records {
                try await connection.query(
                    """
                    INSERT INTO bip353_record (name, device_id, uri, ttl, job_id, updated_at)
                    VALUES (\(record.name), \(record.deviceID), \(record.uri), \(record.ttl), \(record.jobID), \(now))
                    ON CONFLICT (name) DO UPDATE SET device_id = excluded.device_id, uri = excluded.uri, ttl = excluded.ttl,
                        job_id = excluded.job_id, updated_at = excluded.updated_at
                    """, logger: logger)
            }
        }
    }

    public func bip353Records(names: [String]) async throws -> [Bip353Record] {
        guard !names.isEmpty else { return [] }
        return try await rows("SELECT name, device_id, uri, ttl, job_id FROM bip353_record WHERE name = ANY(\(names))")
            .map(Self.bip353Record(from:))
    }

    public func bip353Record(deviceID: String) async throws -> Bip353Record? {
        try await rows("SELECT name, device_id, uri, ttl, job_id FROM bip353_record WHERE device_id = \(deviceID) AND uri IS NOT NULL")
            .first.map(Self.bip353Record(from:))
    }

    static func bip353Record(from row: PostgresRow) throws -> Bip353Record {
        let (name, deviceID, uri, ttl, jobID) = try row.decode((String, String?, String?, Int, String?).self)
        return Bip353Record(name: name, deviceID: deviceID, uri: uri, ttl: ttl, jobID: jobID)
    }
}
