extension PostgresSchema {
    /// Version 3: held request/response round trips through a sleeping phone, cached device
    /// answers, and Lightning-address usernames (the SQLite store's `v3-replies`).
    static let replies = Migration(
        version: 3,
        name: "replies",
        statements: [
            """
            CREATE TABLE pending_reply (
                id text PRIMARY KEY,
                kind text NOT NULL,
                state text NOT NULL CHECK (state IN ('pending', 'answered', 'expired')),
                body bytea,
                cache_max_age integer,
                created_at double precision NOT NULL,
                expires_at double precision NOT NULL,
                answered_at double precision
            )
            """,
            "CREATE INDEX pending_reply_expires ON pending_reply (expires_at)",
            """
            CREATE TABLE reply_cache (
                key text PRIMARY KEY,
                body bytea NOT NULL,
                max_age integer NOT NULL,
                expires_at double precision NOT NULL
            )
            """,
            """
            CREATE TABLE lightning_address (
                username text PRIMARY KEY,
                device_id text NOT NULL UNIQUE REFERENCES device (id) ON DELETE CASCADE,
                pay_info bytea,
                created_at double precision NOT NULL,
                updated_at double precision NOT NULL
            )
            """,
        ]
    )
}
