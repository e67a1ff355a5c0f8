import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: ProviderTokenStore {
    public func providerToken(key: String) async throws -> StoredProviderToken? {
        guard
            let row = try await rows(
                "SELECT value, issued_at, refresh_at FROM provider_token WHERE key = \(key) AND value <> ''"
            ).first
        else { return nil }
        let (value, issuedAt, refreshAt) = try row.decode((String, Double, Double).self)
        return StoredProviderToken(value: value, issuedAt: PostgresRow.date(issuedAt), refreshAt: PostgresRow.date(refreshAt))
    }

    public func claimProviderTokenIssue(key: String, holder: String, now: Date, until: Date) async throws -> Bool {
        let nowValue = now.timeIntervalSince1970
        // One statement, so two instances racing for a missing or due token cannot both win:
        // the insert conflicts, and the update's WHERE is re-checked on the locked row.
        return try await !rows(
            """
            INSERT INTO provider_token (key, value, issued_at, refresh_at, claimed_by, claim_until)
            VALUES (\(key), '', 0, 0, \(holder), \(until.timeIntervalSince1970))
            ON CONFLICT (key) DO UPDATE SET claimed_by = excluded.claimed_by, claim_until = excluded.claim_until
            WHERE provider_token.refresh_at <= \(nowValue)
              AND (provider_token.claim_until IS NULL OR provider_token.claim_until < \(nowValue))
            RETURNING key
            """
        ).isEmpty
    }

    public func storeProviderToken(key: String, token: StoredProviderToken) async throws {
        try await rows(
            """
            UPDATE provider_token
            SET value = \(token.value), issued_at = \(token.issuedAt.timeIntervalSince1970),
                refresh_at = \(token.refreshAt.timeIntervalSince1970), claimed_by = NULL, claim_until = NULL
            WHERE key = \(key)
            """
        )
    }

    public func withdrawProviderToken(key: String, value: String) async throws {
        try await rows("UPDATE provider_token SET refresh_at = 0 WHERE key = \(key) AND value = \(value)")
    }
}
