import Foundation
import HeraldStore
import Testing

@Suite("Provider tokens shared through the store")
struct ProviderTokenStoreTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("one claim at a time, none while the token is fresh, again when it is due or withdrawn", arguments: Backend.allCases)
    func claims(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let key = "apns:TEAM:KEY"
            #expect(try await store.providerToken(key: key) == nil)
            #expect(try await store.claimProviderTokenIssue(key: key, holder: "a", now: start, until: start + 15))
            // Another process while the claim holds: wait for the token instead.
            #expect(try await !store.claimProviderTokenIssue(key: key, holder: "b", now: start + 1, until: start + 16))
            let token = StoredProviderToken(value: "jwt-1", issuedAt: start, refreshAt: start + 2400)
            try await store.storeProviderToken(key: key, token: token)
            #expect(try await store.providerToken(key: key) == token)
            #expect(try await !store.claimProviderTokenIssue(key: key, holder: "b", now: start + 60, until: start + 75))
            // Due for refresh: one process takes it.
            #expect(try await store.claimProviderTokenIssue(key: key, holder: "b", now: start + 2400, until: start + 2415))
            try await store.storeProviderToken(
                key: key, token: StoredProviderToken(value: "jwt-2", issuedAt: start + 2400, refreshAt: start + 4800))
            // Withdrawing an old value changes nothing; the current one makes it due at once.
            try await store.withdrawProviderToken(key: key, value: "jwt-1")
            #expect(try await !store.claimProviderTokenIssue(key: key, holder: "a", now: start + 2500, until: start + 2515))
            try await store.withdrawProviderToken(key: key, value: "jwt-2")
            #expect(try await store.claimProviderTokenIssue(key: key, holder: "a", now: start + 2500, until: start + 2515))
            // A claimer that died: its claim runs out and another takes over.
            #expect(try await !store.claimProviderTokenIssue(key: key, holder: "b", now: start + 2510, until: start + 2525))
            #expect(try await store.claimProviderTokenIssue(key: key, holder: "b", now: start + 2516, until: start + 2531))
        }
    }

    @Test("of many processes claiming a due token at once, exactly one wins", arguments: Backend.allCases)
    func concurrentClaims(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let start = self.start
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for holder in 0..<24 {
                    group.addTask {
                        try await store.claimProviderTokenIssue(key: "fcm:x", holder: "\(holder)", now: start, until: start + 15)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }
}
