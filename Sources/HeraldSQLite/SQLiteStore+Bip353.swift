import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: Bip353Store {
    public func putBip353Records(_ records: [Bip353Record]) async throws {
        let now = Date().timeIntervalSince1970
        try await database.write { db in
            for record in records {
                try db.execute(
                    sql: """
                        INSERT INTO bip353_record (name, device_id, uri, ttl, job_id, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET device_id = excluded.device_id, uri = excluded.uri, ttl = excluded.ttl,
                            job_id = excluded.job_id, updated_at = excluded.updated_at
                        """,
                    arguments: [record.name, record.deviceID, record.uri, record.ttl, record.jobID, now])
            }
        }
    }

    public func bip353Records(names: [String]) async throws -> [Bip353Record] {
        guard !names.isEmpty else { return [] }
        return try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT name, device_id, uri, ttl, job_id FROM bip353_record WHERE name IN (\(databaseQuestionMarks(count: names.count)))",
                arguments: StatementArguments(names)
            ).map(Self.bip353Record(from:))
        }
    }

    public func bip353Record(deviceID: String) async throws -> Bip353Record? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT name, device_id, uri, ttl, job_id FROM bip353_record WHERE device_id = ? AND uri IS NOT NULL",
                arguments: [deviceID]
            ).map(Self.bip353Record(from:))
        }
    }

    static func bip353Record(from row: Row) -> Bip353Record {
        Bip353Record(name: row["name"], deviceID: row["device_id"], uri: row["uri"], ttl: row["ttl"], jobID: row["job_id"])
    }
}
