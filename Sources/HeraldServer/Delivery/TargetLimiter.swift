import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// Each device token's push allowance (``ServerSettings/targetPushesPerMinute``, burst
/// ``ServerSettings/targetPushBurst``): in this process's memory, and with a database shared by
/// several processes also in the database, so the instances together allow the rate once.
struct TargetLimiter: Sendable {
    let local: RateLimiter
    /// The shared allowance; nil on a single-process store.
    let shared: (any TargetRateStore)?

    /// Takes a push from each target's allowance, or throws `429 target_rate_limited` taking none
    /// (and counts it). Checked before anything is stored, so a spammed phone costs the store
    /// nothing; one check for webhooks, relayed requests, backend events and wakes alike.
    func takePushes(for targets: [PushTarget], metrics: HeraldMetrics) async throws {
        // The local bucket first: it only ever holds as much as the shared one (which also
        // counts the other instances' pushes), so a refusal here is final and costs no query.
        // Its keys are hashed from the target's parts: no "platform:token" string is built for it.
        if let wait = local.acquire(hashes: targets.map(Self.localKey)) {
            metrics.rateLimited()
            throw APIError.targetRateLimited(retryAfter: wait)
        }
        guard let shared else { return }
        let keys = targets.map { "\($0.destination.rawValue):\($0.token)" }
        let wait: TimeInterval?
        do {
            wait = try await shared.takeTargetPushes(
                keys: keys.map { Secrets.hash($0).prefix(16).lowercaseHex },
                capacity: local.capacity, refillPerSecond: local.refillPerSecond, now: local.now())
        } catch {
            throw APIError(intakeFailure: error)
        }
        if let wait {
            metrics.rateLimited()
            throw APIError.targetRateLimited(retryAfter: .seconds(wait))
        }
    }

    /// The local bucket's key of a target, under the process's random seed as every `hashValue`.
    private static func localKey(_ target: PushTarget) -> Int {
        var hasher = Hasher()
        hasher.combine(target.destination)
        hasher.combine(target.token)
        return hasher.finalize()
    }
}
