extension PostgresSchema {
    /// Version 4: a device's LSP node id, and the replay memory of LSPS5 signatures (the SQLite
    /// store's `v5-lsps5`, which says why they are shaped so).
    static let lsps5 = Migration(
        version: 4,
        name: "lsps5",
        statements: [
            """
            CREATE TABLE lsps5_lsp (
                device_id text PRIMARY KEY REFERENCES device (id) ON DELETE CASCADE,
                node_id text NOT NULL,
                updated_at double precision NOT NULL
            )
            """,
            """
            CREATE TABLE lsps5_seen (
                device_id text NOT NULL,
                signature text NOT NULL,
                expires_at double precision NOT NULL,
                PRIMARY KEY (device_id, signature)
            )
            """,
            "CREATE INDEX lsps5_seen_expires ON lsps5_seen (expires_at)",
        ]
    )
}
