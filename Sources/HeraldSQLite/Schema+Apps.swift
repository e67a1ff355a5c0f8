import GRDB
import HeraldStore

extension Schema {
    /// Migration `v7-apps`: several apps per deployment. Jobs, devices and backend sessions
    /// name the app whose credentials push to them (existing rows: `default`, the single app
    /// of earlier versions); provider tokens are shared through `provider_token`.
    static func addApps(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE job ADD COLUMN app TEXT NOT NULL DEFAULT 'default';
                ALTER TABLE device ADD COLUMN app TEXT NOT NULL DEFAULT 'default';
                ALTER TABLE backend_session ADD COLUMN app TEXT NOT NULL DEFAULT 'default';
                CREATE TABLE provider_token (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL,
                    issued_at REAL NOT NULL,
                    refresh_at REAL NOT NULL,
                    claimed_by TEXT,
                    claim_until REAL
                ) WITHOUT ROWID;
                """
        )
    }
}
