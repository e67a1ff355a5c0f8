import Foundation
import NIOConcurrencyHelpers

/// A token bucket per key (a client address, a push target): `burst` requests at once, refilled
/// evenly at `perMinute`. In memory: a restart forgives everyone, which is fine for abuse control.
///
/// Keys are kept as 64-bit hashes under the process's random seed, so every entry costs the same
/// few bytes however long its key (a push token may be 4 KiB), and nobody outside can aim two keys
/// at one bucket. At most `maxKeys` buckets are kept: past it full buckets are dropped, then the
/// least recently used; a dropped key starts again with a full bucket (fail open, memory bounded).
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    let capacity: Double
    let refillPerSecond: Double
    let maxKeys: Int
    private let buckets = NIOLockedValueBox([Int: Bucket]())
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - perMinute: The sustained rate.
    ///   - burst: Requests allowed at once after a quiet spell; `perMinute` when nil.
    ///   - maxKeys: Buckets kept at most.
    init(perMinute: Int, burst: Int? = nil, maxKeys: Int = 100_000, now: @escaping @Sendable () -> Date) {
        capacity = Double(max(burst ?? perMinute, 1))
        refillPerSecond = Double(max(perMinute, 1)) / 60
        self.maxKeys = max(maxKeys, 1)
        self.now = now
    }

    /// Takes one token, or returns how long to wait for the next.
    func acquire(_ key: String) -> Duration? {
        acquire([key])
    }

    /// Takes a registration's token for `address`, or refuses it: `429 rate_limited` with `Retry-After`
    /// (device, wake gateway and NWC registrations alike).
    func admitRegistration(from address: String) throws {
        guard let wait = acquire(address) else { return }
        throw APIError(
            .rateLimited, "too many registrations from this address",
            headers: [.retryAfter: "\(max(1, Int(wait.timeInterval.rounded(.up))))"])
    }

    /// Takes one token from each key's bucket, or none when any is empty: then returns how long
    /// until every one of them has a token again.
    func acquire(_ keys: [String]) -> Duration? {
        acquire(hashes: keys.map(\.hashValue))
    }

    /// ``acquire(_:)`` for keys the caller hashed (as `hashValue` does: under the process's seed).
    func acquire(hashes: [Int]) -> Duration? {
        let now = self.now()
        return buckets.withLockedValue { buckets in
            var refilled: [(Int, Bucket)] = []
            refilled.reserveCapacity(hashes.count)
            var wait: Double = 0
            for hash in hashes {
                var bucket = buckets[hash] ?? Bucket(tokens: capacity, updated: now)
                let elapsed = max(0, now.timeIntervalSince(bucket.updated))
                bucket.tokens = min(capacity, bucket.tokens + elapsed * refillPerSecond)
                bucket.updated = now
                if bucket.tokens < 1 { wait = max(wait, (1 - bucket.tokens) / refillPerSecond) }
                refilled.append((hash, bucket))
            }
            let granted = wait == 0
            for (hash, var bucket) in refilled {
                if granted { bucket.tokens -= 1 }
                if buckets[hash] == nil && buckets.count >= maxKeys { makeRoom(&buckets, now: now) }
                buckets[hash] = bucket
            }
            return granted ? nil : .seconds(wait)
        }
    }

    /// Books the next slot in `key`'s bucket if it comes within `window`: returns how long from
    /// now until it (zero when a token is there now), or nil, taking nothing, when the next free
    /// slot is later. Booked slots are spent tokens, so callers booking at once get slots one
    /// refill apart, never the same moment.
    func reserve(_ key: String, within window: TimeInterval) -> TimeInterval? {
        let now = self.now()
        let hash = key.hashValue
        return buckets.withLockedValue { buckets in
            var bucket = buckets[hash] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * refillPerSecond)
            bucket.updated = now
            let wait = bucket.tokens >= 1 ? 0 : (1 - bucket.tokens) / refillPerSecond
            guard wait <= window else {
                buckets[hash] = bucket
                return nil
            }
            bucket.tokens -= 1
            if buckets[hash] == nil && buckets.count >= maxKeys { makeRoom(&buckets, now: now) }
            buckets[hash] = bucket
            return wait
        }
    }

    /// Buckets kept now.
    var count: Int { buckets.withLockedValue { $0.count } }

    /// Brings the map down to three quarters of the cap, so the next quarter of new keys go in
    /// without another pass: full buckets first (they carry no information), then the oldest.
    private func makeRoom(_ buckets: inout [Int: Bucket], now: Date) {
        let capacity = self.capacity
        let refillPerSecond = refillPerSecond
        buckets = buckets.filter { now.timeIntervalSince($0.value.updated) * refillPerSecond + $0.value.tokens < capacity }
        let target = maxKeys * 3 / 4
        guard buckets.count > target else { return }
        let oldest = buckets.sorted { $0.value.updated < $1.value.updated }.prefix(buckets.count - target)
        for (hash, _) in oldest { buckets.removeValue(forKey: hash) }
    }
}
