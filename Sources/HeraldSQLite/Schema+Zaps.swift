import GRDB

extension Schema {
    /// Migration `v9-zaps`: zap requests (NIP-57) by the payment hash of their invoice, until the
    /// payment is reported and the receipt published.
    static func addZaps(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE zap_request (
                    payment_hash TEXT PRIMARY KEY NOT NULL,
                    device_id TEXT NOT NULL,
                    request TEXT NOT NULL,
                    bolt11 TEXT NOT NULL,
                    created_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX zap_request_created ON zap_request(created_at);
                """
        )
    }
}
