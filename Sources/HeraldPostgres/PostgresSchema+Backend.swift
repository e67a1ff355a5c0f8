extension PostgresSchema {
    /// Version 2: API keys, wallet-backend sessions and per-user state (the SQLite store's
    /// `v2-backend`; `backend_session.seal_key` is here from the start, where SQLite adds it in
    /// `v4-seal-keys`).
    static let backend = Migration(
        version: 2,
        name: "backend",
        statements: [
            """
            CREATE TABLE api_key (
                id text PRIMARY KEY,
                name text NOT NULL,
                secret_hash bytea NOT NULL UNIQUE,
                scopes text NOT NULL,
                created_at double precision NOT NULL,
                revoked_at double precision
            )
            """,
            """
            CREATE TABLE backend_session (
                user_id text NOT NULL,
                session_id text NOT NULL,
                platform text NOT NULL,
                allow_notifications boolean NOT NULL,
                push_token text,
                token_dropped_at double precision,
                seal_key text,
                created_at double precision NOT NULL,
                updated_at double precision NOT NULL,
                PRIMARY KEY (user_id, session_id)
            )
            """,
            """
            CREATE TABLE backend_user (
                user_id text PRIMARY KEY,
                dropped_dead_tokens integer NOT NULL DEFAULT 0,
                welcome_sent_at double precision
            )
            """,
        ]
    )
}
