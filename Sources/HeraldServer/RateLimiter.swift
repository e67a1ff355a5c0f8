import Foundation
import NIOConcurrencyHelpers

/// A token bucket per key (a client address): `capacity` requests at once, refilled evenly over
/// a minute. In memory: a restart forgives everyone, which is fine for abuse control.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let capacity: Double
    private let refillPerSecond: Double
    private let buckets = NIOLockedValueBox([String: Bucket]())
    private let now: @Sendable () -> Date

    init(perMinute: Int, now: @escaping @Sendable () -> Date) {
        capacity = Double(max(perMinute, 1))
        refillPerSecond = capacity / 60
        self.now = now
    }

    /// Takes one token, or returns how long to wait for the next.
    func acquire(_ key: String) -> Duration? {
        let now = self.now()
        return buckets.withLockedValue { buckets in
            if buckets.count > 10_000 {
                // Drop full buckets: they carry no information.
                buckets = buckets.filter { now.timeIntervalSince($0.value.updated) * refillPerSecond < capacity }
            }
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + now.timeIntervalSince(bucket.updated) * refillPerSecond)
            bucket.updated = now
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return .seconds((1 - bucket.tokens) / refillPerSecond)
        }
    }
}
