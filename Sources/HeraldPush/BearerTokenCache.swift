import Foundation

/// One bearer token shared by every send: issued on first use, reused until it is due for
/// refresh, replaced when the push service rejects it.
///
/// Concurrent callers that find no usable token wait for a single issue in flight, so a burst
/// of sends after start-up (or after expiry) signs one APNs JWT or makes one OAuth request,
/// not one per send. Apple answers `TooManyProviderTokenUpdates` to a sender that changes its
/// token too often, and Google rate-limits its token endpoint.
actor BearerTokenCache {
    struct Token: Sendable {
        var value: String
        /// From this moment the token is replaced before use.
        var refreshAt: Date
    }

    private let issue: @Sendable () async throws -> Token
    private let now: @Sendable () -> Date
    private var current: Token?
    private var inFlight: Task<Token, any Error>?

    init(now: @escaping @Sendable () -> Date, issue: @escaping @Sendable () async throws -> Token) {
        self.now = now
        self.issue = issue
    }

    /// A token that is not due for refresh, issuing one when needed.
    func token() async throws -> String {
        if let current, now() < current.refreshAt {
            return current.value
        }
        if let inFlight {
            return try await inFlight.value.value
        }
        // Unstructured on purpose: the issue is shared, so one waiter's cancellation must not
        // fail the others. It is bounded by the issuer's own timeouts.
        let task = Task { [issue] in try await issue() }
        inFlight = task
        do {
            let token = try await task.value
            current = token
            inFlight = nil
            return token.value
        } catch {
            inFlight = nil
            throw error
        }
    }

    /// Forgets `value` if it is still the current token, so the next send issues a new one.
    /// Comparing first means a burst of rejections of the same old token refreshes only once.
    func invalidate(_ value: String) {
        if current?.value == value {
            current = nil
        }
    }
}
