extension PostgresSchema {
    /// Zap requests (NIP-57) by the payment hash of their invoice, until the payment is reported
    /// and the receipt published.
    static let zaps = Migration(
        version: 8,
        name: "zaps",
        statements: [
            """
            CREATE TABLE zap_request (
                payment_hash text PRIMARY KEY,
                device_id text NOT NULL,
                request text NOT NULL,
                bolt11 text NOT NULL,
                created_at double precision NOT NULL
            )
            """,
            "CREATE INDEX zap_request_created ON zap_request (created_at)",
        ]
    )
}
