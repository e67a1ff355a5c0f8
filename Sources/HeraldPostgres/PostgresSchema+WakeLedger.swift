extension PostgresSchema {
    /// Version 12: the wake ledger (the SQLite store's `v13-wake-ledger`, which says why it is
    /// shaped so).
    static let wakeLedger = Migration(
        version: 12,
        name: "wake-ledger",
        statements: [
            """
            CREATE TABLE wake_gateway_device (
                device_id text PRIMARY KEY REFERENCES device (id) ON DELETE CASCADE,
                install_key text NOT NULL,
                secret_sha256 text NOT NULL,
                encryption_key text NOT NULL,
                envelope integer NOT NULL,
                environment text NOT NULL,
                topics text NOT NULL,
                registered_ts bigint NOT NULL
            )
            """,
            "CREATE INDEX wake_gateway_device_install ON wake_gateway_device (install_key)",
            "CREATE INDEX wake_gateway_device_secret ON wake_gateway_device (secret_sha256)",
            """
            CREATE TABLE wake (
                id text PRIMARY KEY,
                identity text NOT NULL,
                topic text NOT NULL,
                deadline double precision NOT NULL,
                created_at double precision NOT NULL
            )
            """,
            "CREATE INDEX wake_created ON wake (created_at)",
            """
            CREATE TABLE wake_delivery (
                wake_id text NOT NULL REFERENCES wake (id) ON DELETE CASCADE,
                device_id text NOT NULL,
                job_id text,
                fallback_job_id text,
                present boolean NOT NULL,
                outcome text,
                acked_at double precision,
                fallback_cancelled boolean NOT NULL DEFAULT false,
                PRIMARY KEY (wake_id, device_id)
            )
            """,
            """
            CREATE TABLE shared_secret (
                name text PRIMARY KEY,
                value bytea NOT NULL,
                created_at double precision NOT NULL
            )
            """,
        ]
    )
}
