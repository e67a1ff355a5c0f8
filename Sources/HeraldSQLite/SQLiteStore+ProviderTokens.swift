import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: ProviderTokenStore {
    public func providerToken(key: String) async throws -> StoredProviderToken? {
        try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT value, issued_at, refresh_at FROM provider_token WHERE key = ? AND value <> ''",
                    arguments: [key])
            else { return nil }
            return StoredProviderToken(
                value: row["value"], issuedAt: Date(timeIntervalSince1970: row["issued_at"]),
                refreshAt: Date(timeIntervalSince1970: row["refresh_at"]))
        }
    }

    public func claimProviderTokenIssue(key: String, holder: String, now: Date, until: Date) async throws -> Bool {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO provider_token (key, value, issued_at, refresh_at, claimed_by, claim_until)
                    VALUES (?, '', 0, 0, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET claimed_by = excluded.claimed_by, claim_until = excluded.claim_until
                    WHERE provider_token.refresh_at <= ?
                      AND (provider_token.claim_until IS NULL OR provider_token.claim_until < ?)
                    """,
                arguments: [key, holder, until.timeIntervalSince1970, nowValue, nowValue]
            )
            return db.changesCount > 0
        }
    }

    public func storeProviderToken(key: String, token: StoredProviderToken) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE provider_token SET value = ?, issued_at = ?, refresh_at = ?, claimed_by = NULL, claim_until = NULL
                    WHERE key = ?
                    """,
                arguments: [
                    token.value, token.issuedAt.timeIntervalSince1970, token.refreshAt.timeIntervalSince1970, key,
                ]
            )
        }
    }

    public func withdrawProviderToken(key: String, value: String) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE provider_token SET refresh_at = 0 WHERE key = ? AND value = ?", arguments: [key, value])
        }
    }
}
