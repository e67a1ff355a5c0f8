import Foundation

/// Per-device push allowances kept in a database several processes share, so `N` instances
/// allow one device token the configured rate, not `N` times it. A single-process store needs
/// none: its process's memory is the whole truth.
public protocol TargetRateStore: Sendable {
    /// Takes one push from each key's token bucket (`capacity` at most, refilled at
    /// `refillPerSecond`), all or none; returns nil when taken, or the seconds until every
    /// bucket has a push again.
    func takeTargetPushes(keys: [String], capacity: Double, refillPerSecond: Double, now: Date) async throws
        -> TimeInterval?
}
