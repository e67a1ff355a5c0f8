import Foundation
import Logging

/// Where several Herald processes on one database share each key's provider token, so a key is
/// signed (APNs) or exchanged (Google OAuth) once per refresh for the whole deployment instead
/// of once per process: Apple answers `TooManyProviderTokenUpdates` to a key whose token
/// changes more often than every 20 minutes, and Google rate-limits its token endpoint.
public protocol ProviderTokenSharing: Sendable {
    /// The token last published for `key`, if any.
    func sharedToken(key: String) async throws -> SharedProviderToken?
    /// Takes the right to issue `key`'s next token until `until`, if its token is due (missing,
    /// past `refreshAt`, or withdrawn) and no other process holds that right; whether it did.
    func claimTokenIssue(key: String, holder: String, now: Date, until: Date) async throws -> Bool
    /// Publishes a new token for `key` and releases the claim.
    func publishToken(key: String, token: SharedProviderToken) async throws
    /// Marks `value` due for refresh if it is still `key`'s token (the push service rejected it).
    func withdrawToken(key: String, value: String) async throws
}

/// A provider token as shared between processes.
public struct SharedProviderToken: Sendable, Hashable {
    public var value: String
    public var issuedAt: Date
    /// From this moment the token is replaced before use.
    public var refreshAt: Date

    public init(value: String, issuedAt: Date, refreshAt: Date) {
        self.value = value
        self.issuedAt = issuedAt
        self.refreshAt = refreshAt
    }
}

/// A provider's place in the sharing: the store, the key's name there, and who this process is.
public struct TokenSharing: Sendable {
    public var store: any ProviderTokenSharing
    /// This process, as the holder of a claim (random per process).
    public var holder: String
    public var logger: Logger
    /// How long a claim lasts: a process that dies while issuing blocks the others this long.
    public var claimFor: TimeInterval = 15
    /// How often a process waiting for another's token looks again.
    public var pollEvery: Duration = .milliseconds(50)

    public init(store: any ProviderTokenSharing, holder: String = UUID().uuidString, logger: Logger) {
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
                if let shared = try await store.sharedToken(key: key), current < shared.refreshAt {
                    return .init(value: shared.value, refreshAt: shared.refreshAt)
                }
                if try await store.claimTokenIssue(key: key, holder: holder, now: current, until: current.addingTimeInterval(claimFor)) {
                    let token = try await issue()
                    try await store.publishToken(
                        key: key, token: SharedProviderToken(value: token.value, issuedAt: current, refreshAt: token.refreshAt))
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
            try await store.withdrawToken(key: key, value: value)
        } catch {
            logger.warning("could not withdraw the shared provider token", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }
}
