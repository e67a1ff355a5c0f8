import GRDB

extension Schema {
    /// Migration `v14-nwc`: Nostr Wallet Connect registrations, keyed as breez-lnurl keys them
    /// (wallet service, app), and the events forwarded (by id, with what the cursor needs).
    static func addNwc(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE nwc_registration (
                    wallet_service_pubkey TEXT NOT NULL,
                    app_pubkey TEXT NOT NULL,
                    owner_pubkey TEXT NOT NULL,
                    webhook_url TEXT NOT NULL,
                    relays TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    last_used_at REAL NOT NULL,
                    PRIMARY KEY (wallet_service_pubkey, app_pubkey)
                ) WITHOUT ROWID;
                CREATE INDEX nwc_registration_owner ON nwc_registration(owner_pubkey);

                CREATE TABLE nwc_event (
                    id TEXT PRIMARY KEY NOT NULL,
                    wallet_service_pubkey TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    seen_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX nwc_event_wallet ON nwc_event(wallet_service_pubkey, created_at);
                CREATE INDEX nwc_event_seen ON nwc_event(seen_at);
                """
        )
    }

    /// Migration `v15-nwc-owned-registrations`: one registration per (wallet service, app, node
    /// key). Keyed by the pair alone, whoever registered a pair first held it: a stranger who
    /// knew a wallet's public keys could register them before the wallet did and keep its own
    /// registration out (`403`). Now each node key has its own, and none blocks another.
    static func keyNwcRegistrationsByOwner(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE nwc_registration_owned (
                    wallet_service_pubkey TEXT NOT NULL,
                    app_pubkey TEXT NOT NULL,
                    owner_pubkey TEXT NOT NULL,
                    webhook_url TEXT NOT NULL,
                    relays TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    last_used_at REAL NOT NULL,
                    PRIMARY KEY (wallet_service_pubkey, app_pubkey, owner_pubkey)
                ) WITHOUT ROWID;
                INSERT INTO nwc_registration_owned SELECT * FROM nwc_registration;
                DROP TABLE nwc_registration;
                ALTER TABLE nwc_registration_owned RENAME TO nwc_registration;
                CREATE INDEX nwc_registration_owner ON nwc_registration(owner_pubkey);
                """
        )
    }
}
