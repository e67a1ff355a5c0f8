extension PostgresSchema {
    /// Version 16: BIP-353 records (the SQLite store's `v17-bip353`, which says why it is shaped so).
    static let bip353 = Migration(
        version: 16,
        name: "bip353",
        statements: [
            """
            CREATE TABLE bip353_record (
                name text PRIMARY KEY,
                device_id text,
                uri text,
                ttl integer NOT NULL,
                job_id text,
                updated_at double precision NOT NULL
            )
            """,
            "CREATE INDEX bip353_record_device ON bip353_record (device_id)",
        ])
}
