import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: NwcStore {
    public func putNwcRegistration(_ registration: NwcRegistration, limit: Int) async throws -> NwcPutOutcome {
        try await database.write { db -> NwcPutOutcome in
            let exists =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT 1 FROM nwc_registration WHERE wallet_service_pubkey = ? AND app_pubkey = ? AND owner_pubkey = ?",
                    arguments: [registration.walletServicePubkey, registration.appPubkey, registration.ownerPubkey]) ?? false
            if !exists {
                let held =
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM nwc_registration WHERE owner_pubkey = ?", arguments: [registration.ownerPubkey])
                    ?? 0
                guard held < limit else { return .limitReached }
            }
            try db.execute(
                sql: """
                    INSERT INTO nwc_registration (wallet_service_pubkey, app_pubkey, owner_pubkey, webhook_url, relays, created_at, last_used_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (wallet_service_pubkey, app_pubkey, owner_pubkey) DO UPDATE SET
                        webhook_url = excluded.webhook_url, relays = excluded.relays, last_used_at = excluded.last_used_at
                    """,
                arguments: [
                    registration.walletServicePubkey, registration.appPubkey, registration.ownerPubkey, registration.webhookURL,
                    registration.relays.joined(separator: " "), registration.createdAt.timeIntervalSince1970,
                    registration.lastUsedAt.timeIntervalSince1970,
                ])
            return .stored
        }
    }

    public func deleteNwcRegistration(walletServicePubkey: String, appPubkey: String, owner: String) async throws -> Bool {
        try await database.write { db -> Bool in
            try db.execute(
                sql: "DELETE FROM nwc_registration WHERE wallet_service_pubkey = ? AND app_pubkey = ? AND owner_pubkey = ?",
                arguments: [walletServicePubkey, appPubkey, owner])
            return db.changesCount > 0
        }
    }

    public func nwcRegistrations() async throws -> [NwcRegistration] {
        try await database.read { db in try Self.registrations(db, where: "", arguments: []) }
    }

    public func nwcRegistrations(owner: String) async throws -> [NwcRegistration] {
        try await database.read { db in try Self.registrations(db, where: "WHERE owner_pubkey = ?", arguments: [owner]) }
    }

    private static func registrations(_ db: Database, where filter: String, arguments: StatementArguments) throws -> [NwcRegistration] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT wallet_service_pubkey, app_pubkey, owner_pubkey, webhook_url, relays, created_at, last_used_at
                FROM nwc_registration \(filter) ORDER BY wallet_service_pubkey, app_pubkey, owner_pubkey
                """, arguments: arguments
        ).map { row in
            let relays: String = row["relays"]
            return NwcRegistration(
                walletServicePubkey: row["wallet_service_pubkey"], appPubkey: row["app_pubkey"], ownerPubkey: row["owner_pubkey"],
                webhookURL: row["webhook_url"], relays: relays.split(separator: " ").map(String.init),
                createdAt: Date(timeIntervalSince1970: row["created_at"]), lastUsedAt: Date(timeIntervalSince1970: row["last_used_at"]))
        }
    }

    public func claimNwcEvent(id: String, walletServicePubkey: String, appPubkey: String, createdAt: Int64, now: Date) async throws -> Bool {
        try await database.write { db -> Bool in
            try db.execute(
                sql: "INSERT INTO nwc_event (id, wallet_service_pubkey, created_at, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                arguments: [id, walletServicePubkey, createdAt, now.timeIntervalSince1970])
            guard db.changesCount > 0 else { return false }
            try db.execute(
                sql: "UPDATE nwc_registration SET last_used_at = ? WHERE wallet_service_pubkey = ? AND app_pubkey = ?",
                arguments: [now.timeIntervalSince1970, walletServicePubkey, appPubkey])
            return true
        }
    }

    public func releaseNwcEvent(id: String) async throws {
        try await database.write { db in try db.execute(sql: "DELETE FROM nwc_event WHERE id = ?", arguments: [id]) }
    }

    public func nwcCursors() async throws -> [String: Int64] {
        try await database.read { db in
            var cursors: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT wallet_service_pubkey, MAX(seen_at) AS seen FROM nwc_event GROUP BY wallet_service_pubkey") {
                let seen: Double = row["seen"]
                cursors[row["wallet_service_pubkey"]] = Int64(seen.rounded(.down))
            }
            return cursors
        }
    }

    /// One process per SQLite file: it holds every lease, a restarted one at once.
    public func leaseNwcWallets(_ walletServicePubkeys: [String], owner: String, now: Date, until: Date) async throws -> Set<String> {
        Set(walletServicePubkeys)
    }

    public func purgeNwc(seenBefore: Date, unusedBefore: Date) async throws -> Int {
        try await database.write { db -> Int in
            try db.execute(sql: "DELETE FROM nwc_event WHERE seen_at < ?", arguments: [seenBefore.timeIntervalSince1970])
            try db.execute(sql: "DELETE FROM nwc_registration WHERE last_used_at < ?", arguments: [unusedBefore.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
