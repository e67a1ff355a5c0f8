import Foundation
import HeraldStore
import Logging

/// A provider's place in the store's token sharing (``ProviderTokenStore``): several Herald
/// processes on one database share each key's provider token, so a key is signed (APNs) or
/// exchanged (Google OAuth) once per refresh for the whole deployment instead of once per
/// process. Apple answers `TooManyProviderTokenUpdates` to a key whose token changes more
/// often than every 20 minutes, and Google rate-limits its token endpoint.
public struct TokenSharing: Sendable {
    public var store: any ProviderTokenStore
    /// This process, as the holder of a claim (random per process).
    public var holder: String
    public var logger: Logger
    /// How long a claim lasts: a process that dies while issuing blocks the others this long.
    public var claimFor: TimeInterval = 15
    /// How often a process waiting for another's token looks again.
    public var pollEvery: Duration = .milliseconds(50)

    public init(store: any ProviderTokenStore, holder: String = UUID().uuidString, logger: Logger) {
        self.store = store
        self.holder = holder
        self.logger = logger
    }

    /// The shared token for `key`: the published one while fresh; otherwise issued here if
    /// this process wins the claim, or awaited from the process that did. If the store fails,
    /// or the claimer does not publish before its claim runs out, the token is issued here:
    /// a push is worth more than one extra refresh.
    func token(
        key: String, now: @Sendable () -> Date, issue: @Sendable () async throws -> BearerTokenCache.Token
    ) async throws -> BearerTokenCache.Token {
        let deadline = now().addingTimeInterval(claimFor)
        do {
            while true {
                let current = now()
                if let shared = try await store.providerToken(key: key), current < shared.refreshAt {
                    return .init(value: shared.value, refreshAt: shared.refreshAt)
                }
                if try await store.claimProviderTokenIssue(key: key, holder: holder, now: current, until: current.addingTimeInterval(claimFor)) {
                    let token = try await issue()
                    try await store.storeProviderToken(
                        key: key, token: StoredProviderToken(value: token.value, issuedAt: current, refreshAt: token.refreshAt))
                    logger.info("issued the shared provider token", metadata: ["key": "\(key)"])
                    return token
                }
                if current >= deadline { break }
                try await Task.sleep(for: pollEvery)
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning("could not share the provider token; issuing one here", metadata: ["key": "\(key)", "error": "\(error)"])
        }
        return try await issue()
    }

    func withdraw(key: String, value: String) async {
        do {
            try await store.withdrawProviderToken(key: key, value: value)
        } catch {
            logger.warning("could not withdraw the shared provider token", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}
