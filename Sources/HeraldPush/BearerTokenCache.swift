import Foundation
import NIOConcurrencyHelpers

/// One bearer token shared by every send: issued on first use, reused until it is due for
/// refresh, replaced when the push service rejects it.
///
/// Concurrent callers that find no usable token wait for a single issue in flight, so a burst
/// of sends after start-up (or after expiry) signs one APNs JWT or makes one OAuth request,
/// not one per send. Apple answers `TooManyProviderTokenUpdates` to a sender that changes its
/// token too often, and Google rate-limits its token endpoint.
///
/// A usable token is read under a lock, without a hop to the issuing actor: every send asks,
/// and at thousands of sends a second the hop was a measurable share of a send's cost.
final class BearerTokenCache: Sendable {
    struct Token: Sendable {
        var value: String
        /// From this moment the token is replaced before use.
        var refreshAt: Date
    }

    private let issuer: Issuer
    private let now: @Sendable () -> Date
    private let usable = NIOLockedValueBox<Token?>(nil)
    private let shared: (sharing: TokenSharing, key: String)?
    /// When this cache first handed out the current token (about when it was issued).
    private let firstUsed = NIOLockedValueBox<(value: String, at: Date)?>(nil)

    /// - Parameter sharing: With several processes on one database, the token is shared
    ///   through it under `key` (see ``TokenSharing``); nil keeps it to this process.
    init(
        now: @escaping @Sendable () -> Date,
        sharing: TokenSharing? = nil,
        key: String = "",
        issue: @escaping @Sendable () async throws -> Token
    ) {
        self.now = now
        if let sharing {
            shared = (sharing, key)
            self.issuer = Issuer(now: now) { try await sharing.token(key: key, now: now, issue: issue) }
        } else {
            shared = nil
            self.issuer = Issuer(now: now, issue: issue)
        }
    }

    /// A token that is not due for refresh, issuing one when needed.
    func token() async throws -> String {
        let now = self.now()
        if let token = usable.withLockedValue({ $0 }), now < token.refreshAt {
            return token.value
        }
        let token = try await issuer.token()
        usable.withLockedValue { $0 = token }
        firstUsed.withLockedValue { if $0?.value != token.value { $0 = (token.value, now) } }
        return token.value
    }

    /// When the token in use was first handed out; nil before the first send.
    var issuedAt: Date? { firstUsed.withLockedValue { $0?.at } }

    /// Forgets `value` if it is still the current token, so the next send issues a new one.
    func invalidate(_ value: String) async {
        usable.withLockedValue { if $0?.value == value { $0 = nil } }
        await issuer.invalidate(value)
        if let shared { await shared.sharing.withdraw(key: shared.key, value: value) }
    }
}

/// Issues tokens one at a time for ``BearerTokenCache``.
private actor Issuer {
    typealias Token = BearerTokenCache.Token

    private let issue: @Sendable () async throws -> Token
    private let now: @Sendable () -> Date
    private var current: Token?
    private var inFlight: Task<Token, any Error>?

    init(now: @escaping @Sendable () -> Date, issue: @escaping @Sendable () async throws -> Token) {
        self.now = now
        self.issue = issue
    }

    func token() async throws -> Token {
        if let current, now() < current.refreshAt {
            return current
        }
        if let inFlight {
            return try await inFlight.value
        }
        // Unstructured on purpose: the issue is shared, so one waiter's cancellation must not
        // fail the others. It is bounded by the issuer's own timeouts.
        let task = Task { [issue] in try await issue() }
        inFlight = task
        do {
            let token = try await task.value
            current = token
            inFlight = nil
            return token
        } catch {
            inFlight = nil
            throw error
        }
    }

    /// Comparing first means a burst of rejections of the same old token refreshes only once.
    func invalidate(_ value: String) {
        if current?.value == value {
            current = nil
        }
    }
}
