import Foundation
import GRDB
import HeraldStore

extension SQLiteStore: APIKeyStore {
    /// What every API key starts with, so a leaked one is recognisable in logs and scans.
    public static let apiKeyPrefix = CreatedAPIKey.secretPrefix

    public func createAPIKey(name: String, scopes: Set<APIScope>, now: Date) async throws -> CreatedAPIKey {
        // One way to make a key, on every back end (CreatedAPIKey.make).
        let created = CreatedAPIKey.make(name: name, scopes: scopes, now: now)
        let key = created.key
        let secret = created.secret
        try await database.write { db in
            try db.execute(
                sql: "INSERT INTO api_key (id, name, secret_hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [key.id, name, Secrets.hash(secret), Self.encode(scopes), now.timeIntervalSince1970]
            )
        }
        return created
    }

    public func apiKey(secret: String) async throws -> APIKey? {
        guard secret.hasPrefix(Self.apiKeyPrefix), secret.utf8.count <= 256 else { return nil }
        // Looked up by hash: the index compares digests, never the secret itself.
        let hash = Secrets.hash(secret)
        return try await database.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT \(Self.apiKeyColumns) FROM api_key WHERE secret_hash = ?",
                arguments: [hash]
            ).map(Self.apiKey(from:))
        }
    }

    public func apiKeys() async throws -> [APIKey] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(Self.apiKeyColumns) FROM api_key ORDER BY created_at, id"
            ).map(Self.apiKey(from:))
        }
    }

    public func revokeAPIKey(id: String, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE api_key SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id]
            )
            return db.changesCount > 0
        }
    }

    /// The columns ``apiKey(from:)`` reads.
    static let apiKeyColumns = "id, name, scopes, created_at, revoked_at"

    static func apiKey(from row: Row) -> APIKey {
        let revokedAt: Double? = row["revoked_at"]
        return APIKey(
            id: row["id"],
            name: row["name"],
            scopes: decodeScopes(row["scopes"]),
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            revokedAt: revokedAt.map(Date.init(timeIntervalSince1970:))
        )
    }

    static func encode(_ scopes: Set<APIScope>) -> String {
        scopes.map(\.rawValue).sorted().joined(separator: ",")
    }

    static func decodeScopes(_ text: String) -> Set<APIScope> {
        Set(text.split(separator: ",").map { APIScope(rawValue: String($0)) })
    }
}
