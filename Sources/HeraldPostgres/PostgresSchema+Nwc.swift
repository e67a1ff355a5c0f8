extension PostgresSchema {
    /// Version 13: Nostr Wallet Connect (the SQLite store's `v14-nwc`, which says why it is
    /// shaped so).
    static let nwc = Migration(
        version: 13,
        name: "nwc",
        statements: [
            """
            CREATE TABLE nwc_registration (
                wallet_service_pubkey text NOT NULL,
                app_pubkey text NOT NULL,
                owner_pubkey text NOT NULL,
                webhook_url text NOT NULL,
                relays text NOT NULL,
                created_at double precision NOT NULL,
                last_used_at double precision NOT NULL,
                PRIMARY KEY (wallet_service_pubkey, app_pubkey)
            )
            """,
            "CREATE INDEX nwc_registration_owner ON nwc_registration (owner_pubkey)",
            """
            CREATE TABLE nwc_event (
                id text PRIMARY KEY,
                wallet_service_pubkey text NOT NULL,
                created_at bigint NOT NULL,
                seen_at double precision NOT NULL
            )
            """,
            "CREATE INDEX nwc_event_wallet ON nwc_event (wallet_service_pubkey, created_at)",
            "CREATE INDEX nwc_event_seen ON nwc_event (seen_at)",
            """
            CREATE TABLE nwc_lease (
                wallet_service_pubkey text PRIMARY KEY,
                owner text NOT NULL,
                lease_until double precision NOT NULL
            )
            """,
        ]
    )

    /// Version 14: one NWC registration per (wallet service, app, node key) (the SQLite store's
    /// `v15-nwc-owned-registrations`, which says why).
    static let nwcOwnedRegistrations = Migration(
        version: 14,
        name: "nwc-owned-registrations",
        statements: [
            "ALTER TABLE nwc_registration DROP CONSTRAINT nwc_registration_pkey",
            "ALTER TABLE nwc_registration ADD PRIMARY KEY (wallet_service_pubkey, app_pubkey, owner_pubkey)",
        ]
    )
}
