import Foundation

/// Provider tokens shared by every process on the database (one APNs JWT per signing key, one
/// Google access token per service account), so a deployment refreshes each once, not once per
/// process. The push side's `TokenSharing` drives it; the rows hold live bearer tokens, as
/// secret as the rest of the database.
public protocol ProviderTokenStore: Sendable {
    func providerToken(key: String) async throws -> StoredProviderToken?
    /// Takes the right to issue `key`'s next token until `until` when the stored one is due at
    /// `now` (or missing) and no unexpired claim is held; whether it was taken.
    func claimProviderTokenIssue(key: String, holder: String, now: Date, until: Date) async throws -> Bool
    /// Stores a new token and releases the claim.
    func storeProviderToken(key: String, token: StoredProviderToken) async throws
    /// Makes `value` due at once, if it is still the stored token.
    func withdrawProviderToken(key: String, value: String) async throws
}

public struct StoredProviderToken: Sendable, Hashable {
    public var value: String
    public var issuedAt: Date
    public var refreshAt: Date

    public init(value: String, issuedAt: Date, refreshAt: Date) {
        self.value = value
        self.issuedAt = issuedAt
        self.refreshAt = refreshAt
    }
}
