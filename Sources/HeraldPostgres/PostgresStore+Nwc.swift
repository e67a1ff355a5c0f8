import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: NwcStore {
    /// The count and the upsert in one transaction, the owner's rows locked: two registrations
    /// racing past the limit cannot both be new.
    public func putNwcRegistration(_ registration: NwcRegistration, limit: Int) async throws -> NwcPutOutcome {
        try await transaction { connection, logger -> NwcPutOutcome in
            let held = try await connection.query(
                """
                SELECT wallet_service_pubkey, app_pubkey FROM nwc_registration WHERE owner_pubkey = \(registration.ownerPubkey) FOR UPDATE
                """, logger: logger
            ).collect()
            let exists = try held.contains { row in
                let (wallet, app) = try row.decode((String, String).self)
                return wallet == registration.walletServicePubkey && app == registration.appPubkey
            }
            if !exists, held.count >= limit { return .limitReached }
            try await connection.query(
                """
                INSERT INTO nwc_registration (wallet_service_pubkey, app_pubkey, owner_pubkey, webhook_url, relays, created_at, last_used_at)
                VALUES (\(registration.walletServicePubkey), \(registration.appPubkey), \(registration.ownerPubkey), \(registration.webhookURL),
                        \(registration.relays.joined(separator: " ")), \(registration.createdAt.timeIntervalSince1970),
                        \(registration.lastUsedAt.timeIntervalSince1970))
                ON CONFLICT (wallet_service_pubkey, app_pubkey, owner_pubkey) DO UPDATE SET
                    webhook_url = excluded.webhook_url, relays = excluded.relays, last_used_at = excluded.last_used_at
                """, logger: logger)
            return .stored
        }
    }

    public func deleteNwcRegistration(walletServicePubkey: String, appPubkey: String, owner: String) async throws -> Bool {
        !(try await rows(
            """
            DELETE FROM nwc_registration
            WHERE wallet_service_pubkey = \(walletServicePubkey) AND app_pubkey = \(appPubkey) AND owner_pubkey = \(owner)
            RETURNING 1
            """
        ).isEmpty)
    }

    public func nwcRegistrations() async throws -> [NwcRegistration] {
        try await rows(
            """
            SELECT wallet_service_pubkey, app_pubkey, owner_pubkey, webhook_url, relays, created_at, last_used_at
            FROM nwc_registration ORDER BY wallet_service_pubkey, app_pubkey, owner_pubkey
            """
        ).map(Self.registration(from:))
    }

    public func nwcRegistrations(owner: String) async throws -> [NwcRegistration] {
        try await rows(
            """
            SELECT wallet_service_pubkey, app_pubkey, owner_pubkey, webhook_url, relays, created_at, last_used_at
            FROM nwc_registration WHERE owner_pubkey = \(owner) ORDER BY wallet_service_pubkey, app_pubkey
            """
        ).map(Self.registration(from:))
    }

    static func registration(from row: PostgresRow) throws -> NwcRegistration {
        let (wallet, app, owner, webhook, relays, createdAt, lastUsedAt) = try row.decode(
            (String, String, String, String, String, Double, Double).self)
        return NwcRegistration(
            walletServicePubkey: wallet, appPubkey: app, ownerPubkey: owner, webhookURL: webhook,
            relays: relays.split(separator: " ").map(String.init), createdAt: Date(timeIntervalSince1970: createdAt),
            lastUsedAt: Date(timeIntervalSince1970: lastUsedAt))
    }

    public func claimNwcEvent(id: String, walletServicePubkey: String, appPubkey: String, createdAt: Int64, now: Date) async throws -> Bool {
        let nowValue = now.timeIntervalSince1970
        return
            !(try await rows(
                """
                WITH claimed AS (
                    INSERT INTO nwc_event (id, wallet_service_pubkey, created_at, seen_at)
                    VALUES (\(id), \(walletServicePubkey), \(createdAt), \(nowValue))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                ), used AS (
                    UPDATE nwc_registration SET last_used_at = \(nowValue)
                    WHERE wallet_service_pubkey = \(walletServicePubkey) AND app_pubkey = \(appPubkey) AND EXISTS (SELECT 1 FROM claimed)
                )
                SELECT id FROM claimed
                """
            ).isEmpty)
    }

    public func releaseNwcEvent(id: String) async throws {
        try await rows("DELETE FROM nwc_event WHERE id = \(id)")
    }

    public func nwcCursors() async throws -> [String: Int64] {
        var cursors: [String: Int64] = [:]
        for row in try await rows("SELECT wallet_service_pubkey, floor(MAX(seen_at))::bigint FROM nwc_event GROUP BY wallet_service_pubkey") {
            let (wallet, seen) = try row.decode((String, Int64).self)
            cursors[wallet] = seen
        }
        return cursors
    }

    public func leaseNwcWallets(_ walletServicePubkeys: [String], owner: String, now: Date, until: Date) async throws -> Set<String> {
        guard !walletServicePubkeys.isEmpty else { return [] }
        let rows = try await rows(
            """
            INSERT INTO nwc_lease (wallet_service_pubkey, owner, lease_until)
            SELECT unnest(\(walletServicePubkeys)::text[]), \(owner), \(until.timeIntervalSince1970)
            ON CONFLICT (wallet_service_pubkey) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
            WHERE nwc_lease.owner = excluded.owner OR nwc_lease.lease_until < \(now.timeIntervalSince1970)
            RETURNING wallet_service_pubkey
            """)
        return Set(try rows.map { try $0.decode(String.self) })
    }

    public func purgeNwc(seenBefore: Date, unusedBefore: Date) async throws -> Int {
        try await rows(
            """
            WITH seen AS (DELETE FROM nwc_event WHERE seen_at < \(seenBefore.timeIntervalSince1970))
            DELETE FROM nwc_registration WHERE last_used_at < \(unusedBefore.timeIntervalSince1970) RETURNING 1
            """
        ).count
    }
}
