import GRDB
import HeraldStore

extension Schema {
    /// Migration `v2-backend`: API keys, wallet-backend sessions and per-user state.
    static func createBackendTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE api_key (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    secret_hash BLOB NOT NULL UNIQUE,
                    scopes TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );

                -- One row per login of a user on a device. The token is nullable: a session
                -- without notifications may have none, and a dead one is removed.
                CREATE TABLE backend_session (
                    user_id TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    allow_notifications INTEGER NOT NULL,
                    push_token TEXT,
                    token_dropped_at REAL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (user_id, session_id)
                ) WITHOUT ROWID;

                CREATE TABLE backend_user (
                    user_id TEXT PRIMARY KEY NOT NULL,
                    dropped_dead_tokens INTEGER NOT NULL DEFAULT 0,
                    welcome_sent_at REAL
                ) WITHOUT ROWID;
                """
        )
    }
}
