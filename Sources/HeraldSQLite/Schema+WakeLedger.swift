import GRDB

extension Schema {
    /// Migration `v13-wake-ledger`: devices of the wake gateway API (beside their `device` row,
    /// gone with it), wakes addressed to identities with each device's delivery and ack, and
    /// the deployment's shared secrets.
    static func addWakeLedger(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE wake_gateway_device (
                    device_id TEXT PRIMARY KEY NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                    install_key TEXT NOT NULL,
                    secret_sha256 TEXT NOT NULL,
                    encryption_key TEXT NOT NULL,
                    envelope INTEGER NOT NULL,
                    environment TEXT NOT NULL,
                    topics TEXT NOT NULL,
                    registered_ts INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX wake_gateway_device_install ON wake_gateway_device(install_key);
                CREATE INDEX wake_gateway_device_secret ON wake_gateway_device(secret_sha256);

                CREATE TABLE wake (
                    id TEXT PRIMARY KEY NOT NULL,
                    identity TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    deadline REAL NOT NULL,
                    created_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX wake_created ON wake(created_at);

                CREATE TABLE wake_delivery (
                    wake_id TEXT NOT NULL REFERENCES wake(id) ON DELETE CASCADE,
                    device_id TEXT NOT NULL,
                    job_id TEXT,
                    fallback_job_id TEXT,
                    present INTEGER NOT NULL,
                    outcome TEXT,
                    acked_at REAL,
                    fallback_cancelled INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (wake_id, device_id)
                ) WITHOUT ROWID;

                CREATE TABLE shared_secret (
                    name TEXT PRIMARY KEY NOT NULL,
                    value BLOB NOT NULL,
                    created_at REAL NOT NULL
                ) WITHOUT ROWID;
                """
        )
    }
}
