import Foundation
import HeraldPush
import HeraldStore

/// The push side's token sharing on the store: every process on the database sees the same
/// provider token per key.
public struct StoreTokenSharing: ProviderTokenSharing {
    let store: any ProviderTokenStore

    public init(store: any ProviderTokenStore) {
        self.store = store
    }

    public func sharedToken(key: String) async throws -> SharedProviderToken? {
        try await store.providerToken(key: key).map {
            SharedProviderToken(value: $0.value, issuedAt: $0.issuedAt, refreshAt: $0.refreshAt)
        }
    }

    public func claimTokenIssue(key: String, holder: String, now: Date, until: Date) async throws -> Bool {
        try await store.claimProviderTokenIssue(key: key, holder: holder, now: now, until: until)
    }

    public func publishToken(key: String, token: SharedProviderToken) async throws {
        try await store.storeProviderToken(
            key: key, token: StoredProviderToken(value: token.value, issuedAt: token.issuedAt, refreshAt: token.refreshAt))
    }

    public func withdrawToken(key: String, value: String) async throws {
        try await store.withdrawProviderToken(key: key, value: value)
    }
}
