import GRDB

extension Schema {
    /// Migration `v10-identities`: the identities each device proved. Looked up by identity
    /// (a Breez payment webhook names one), so the identity leads the key; a device's rows go
    /// with it.
    static func addIdentities(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE device_identity (
                    identity TEXT NOT NULL,
                    device_id TEXT NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                    created_at REAL NOT NULL,
                    PRIMARY KEY (identity, device_id)
                ) WITHOUT ROWID;
                CREATE INDEX device_identity_device ON device_identity(device_id);
                """
        )
    }
}
