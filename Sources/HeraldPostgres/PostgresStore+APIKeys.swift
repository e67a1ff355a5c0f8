import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: APIKeyStore {
    public func createAPIKey(
        name: String, scopes: Set<APIScope>, now: Date
    ) async throws
        -> CreatedAPIKey
    {
        let created = CreatedAPIKey.make(name: name, scopes: scopes, now: now)
        try await rows(
            """
            INSERT INTO api_key (id, name, secret_hash, scopes, created_at)
            VALUES (\(created.key.id), \(name), \(Secrets.hash(created.secret)), \(scopes.storedForm),
                    \(now.timeIntervalSince1970))
            """
        )
        return created
    }

    public func apiKey(secret: String) async throws -> APIKey? {
        guard CreatedAPIKey.isPlausible(secret: secret) else { return nil }
        // Looked up by hash: the index compares digests, never the secret itself.
        return try await rows(
            "SELECT \(unescaped: Self.apiKeyColumns) FROM api_key WHERE secret_hash = \(Secrets.hash(secret))"
        ).first.map(Self.apiKey(from:))
    }

    public func apiKeys() async throws -> [APIKey] {
        try await rows(
            "SELECT \(unescaped: Self.apiKeyColumns) FROM api_key ORDER BY created_at, id"
        )
        .map(Self.apiKey(from:))
    }

    public func revokeAPIKey(id: String, now: Date) async throws -> Bool {
        try await !rows(
            "UPDATE api_key SET revoked_at = coalesce(revoked_at, \(now.timeIntervalSince1970)) WHERE id = \(id) RETURNING 1"
        ).isEmpty
    }

    /// The columns ``apiKey(from:)`` reads, in its order.
    static let apiKeyColumns = "id, name, scopes, created_at, revoked_at"

    static func apiKey(from row: PostgresRow) throws -> APIKey {
        let (id, name, scopes, createdAt, revokedAt) = try row.decode(
            (String, String, String, Double, Double?).self)
        return APIKey(
            id: id, name: name, scopes: Set(storedForm: scopes), createdAt: PostgresRow.date(createdAt),
            revokedAt: revokedAt.map(PostgresRow.date)
        )
    }
}
