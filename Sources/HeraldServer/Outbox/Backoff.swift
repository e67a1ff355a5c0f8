/// Exponential backoff with full jitter (a random delay between zero and the exponential
/// ceiling), so that retries after an outage spread out instead of arriving together.
public struct Backoff: Sendable, Hashable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .seconds(1), cap: Duration = .seconds(300)) {
        self.base = base
        self.cap = cap
    }

    /// The delay before the attempt after `attempts` failed ones. A push service's
    /// `Retry-After` is a floor: we never come back sooner than it asked.
    public func delay(
        afterAttempts attempts: Int,
        retryAfter: Duration? = nil,
        using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let exponent = min(max(attempts - 1, 0), 30)
        let ceiling = min(cap, base * (1 << exponent))
        let ceilingNanos = max(ceiling.nanoseconds, 1)
        let jittered = Duration.nanoseconds(Int64.random(in: 0...ceilingNanos, using: &generator))
        guard let retryAfter else { return jittered }
        return max(retryAfter, jittered)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    var timeInterval: Double { Double(nanoseconds) / 1e9 }
}
