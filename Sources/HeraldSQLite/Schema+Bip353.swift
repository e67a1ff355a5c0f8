import GRDB

extension Schema {
    /// Migration `v17-bip353`: the BIP-353 names Herald publishes by DNS UPDATE, as it wants them.
    /// Not tied to the device: a deleted device's record must still leave the zone.
    static func addBip353(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE bip353_record (
                    name TEXT PRIMARY KEY NOT NULL,
                    device_id TEXT,
                    uri TEXT,
                    ttl INTEGER NOT NULL,
                    job_id TEXT,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX bip353_record_device ON bip353_record(device_id);
                """
        )
    }
}
