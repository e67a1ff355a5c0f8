import Foundation

/// The right to push a wake, claimed in a database several processes share, so two instances
/// receiving the same wake at once push it once (a single process keeps its claims in memory).
public protocol WakeClaimStore: Sendable {
    /// Claims `repeatKey` at `now` unless it was claimed less than `window` seconds ago.
    func claimWake(repeatKey: String, idempotencyKey: String?, now: Date, window: TimeInterval) async throws
        -> WakeClaimOutcome
    /// Gives back a claim made at `at` when nothing was pushed after all.
    func releaseWake(repeatKey: String, at: Date) async throws
}

public enum WakeClaimOutcome: Sendable, Hashable {
    /// Push it.
    case push
    /// The same wake (same idempotency key) within the window.
    case replay
    /// Another wake for the same payment was pushed moments ago.
    case recentlyWoken
}
