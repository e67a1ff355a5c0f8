/// The clock the plugin measures its deadline and backoff with, erased so that the plugin needs
/// no generic parameter. Built from any `Clock` (tests may pass their own).
public struct DeviceClock: Sendable {
    /// Time since this clock value was made.
    public let elapsed: @Sendable () -> Duration
    /// Suspends for a duration; throws on cancellation.
    public let sleep: @Sendable (Duration) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        self.elapsed = { start.duration(to: clock.now) }
        self.sleep = { duration in try await clock.sleep(for: duration) }
    }

    /// The monotonic clock that keeps running while the device sleeps.
    public static var continuous: DeviceClock { DeviceClock(ContinuousClock()) }
}

/// A point in time on a `DeviceClock`: what is left of the extension's budget.
public struct Deadline: Sendable {
    let clock: DeviceClock
    /// The deadline as an offset on `clock`.
    public let at: Duration

    public init(clock: DeviceClock, after budget: Duration) {
        self.clock = clock
        self.at = clock.elapsed() + budget
    }

    /// Time left, never negative.
    public var remaining: Duration { max(.zero, at - clock.elapsed()) }
    public var hasPassed: Bool { remaining == .zero }
}
