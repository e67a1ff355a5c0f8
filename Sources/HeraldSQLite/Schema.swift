import GRDB
import HeraldStore

/// The SQLite schema. Migrations are append-only: never edit a shipped one, add the next.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-outbox-devices") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job (
                        id TEXT PRIMARY KEY NOT NULL,
                        platform TEXT NOT NULL,
                        token TEXT NOT NULL,
                        notification_type TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        idempotency_key TEXT UNIQUE,
                        state TEXT NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt_at REAL NOT NULL,
                        lease_until REAL,
                        created_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        finished_at REAL,
                        last_error TEXT
                    );
                    CREATE INDEX job_due ON job(next_attempt_at) WHERE state = 'pending';
                    CREATE INDEX job_token ON job(platform, token) WHERE state = 'pending';
                    CREATE INDEX job_finished ON job(finished_at) WHERE state != 'pending';

                    CREATE TABLE dead_token (
                        platform TEXT NOT NULL,
                        token TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        marked_at REAL NOT NULL,
                        PRIMARY KEY (platform, token)
                    ) WITHOUT ROWID;

                    CREATE TABLE device (
                        id TEXT PRIMARY KEY NOT NULL,
                        platform TEXT NOT NULL,
                        token TEXT NOT NULL,
                        alias TEXT NOT NULL UNIQUE,
                        secret_hash BLOB NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE INDEX device_token ON device(platform, token);

                    CREATE TABLE local_push (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        platform TEXT NOT NULL,
                        token TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX local_push_token ON local_push(platform, token, seq);
                    """
            )
        }
        migrator.registerMigration("v2-backend") { db in try createBackendTables(db) }
        migrator.registerMigration("v3-replies") { db in try createReplyTables(db) }
        migrator.registerMigration("v4-seal-keys") { db in try addSealKeys(db) }
        migrator.registerMigration("v5-lsps5") { db in try addLSPS5(db) }
        migrator.registerMigration("v6-dead-letters") { db in try addDeadLetterColumns(db) }
        migrator.registerMigration("v7-apps") { db in try addApps(db) }
        migrator.registerMigration("v8-deleted-aliases") { db in try addDeletedAliases(db) }
        migrator.registerMigration("v9-zaps") { db in try addZaps(db) }
        migrator.registerMigration("v10-identities") { db in try addIdentities(db) }
        migrator.registerMigration("v11-idempotency-fingerprints") { db in
            // What an idempotency key was sent with: another body under the same key is refused.
            try db.execute(sql: "ALTER TABLE job ADD COLUMN idempotency_fingerprint TEXT")
        }
        migrator.registerMigration("v12-device-challenges") { db in
            // registration: challenge — a device's one-time code, and when it came back.
            try db.execute(
                sql: """
                    CREATE TABLE device_challenge (
                        device_id TEXT PRIMARY KEY NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                        code_hash BLOB NOT NULL,
                        created_at REAL NOT NULL,
                        confirmed_at REAL
                    ) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("v13-wake-ledger") { db in try addWakeLedger(db) }
        migrator.registerMigration("v14-nwc") { db in try addNwc(db) }
        migrator.registerMigration("v15-nwc-owned-registrations") { db in try keyNwcRegistrationsByOwner(db) }
        migrator.registerMigration("v16-live-activities") { db in try addLiveActivities(db) }
        migrator.registerMigration("v17-bip353") { db in try addBip353(db) }
        return migrator
    }
}
