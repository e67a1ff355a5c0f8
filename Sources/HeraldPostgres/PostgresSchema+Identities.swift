extension PostgresSchema {
    /// Version 9: the identities each device proved (the SQLite store's `v10-identities`, which
    /// says why it is shaped so).
    static let identities = Migration(
        version: 9,
        name: "identities",
        statements: [
            """
            CREATE TABLE device_identity (
                identity text NOT NULL,
                device_id text NOT NULL REFERENCES device (id) ON DELETE CASCADE,
                created_at double precision NOT NULL,
                PRIMARY KEY (identity, device_id)
            )
            """,
            "CREATE INDEX device_identity_device ON device_identity (device_id)",
        ]
    )
}
