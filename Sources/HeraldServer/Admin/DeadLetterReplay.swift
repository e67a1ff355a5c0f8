import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// How Herald replays dead letters, for the admin API, the dashboard and `herald dead-letters`.
public enum DeadLetterReplay {
    /// A replay at `now`: the stored push gets the new job's expiry (its own has passed, and
    /// APNs and FCM would drop it at once). A payload that no longer decodes is kept as it is;
    /// the dispatcher dead-letters it again as `undecodable_payload`.
    public static func plan(now: Date) -> ReplayPlan {
        ReplayPlan(now: now) { payload, expiresAt in
            guard var message = try? PushMessage(storedJSON: payload) else { return payload }
            message.expiresAt = expiresAt
            return message.storedJSON()
        }
    }

    /// The filter a query string asks for: `reason` (a reason code) and `platform`, each optional.
    static func filter(reason: String?, platform: String?) throws -> DeadLetterFilter {
        var filter = DeadLetterFilter()
        if let reason, !reason.isEmpty {
            guard reason.utf8.count <= 64, reason.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || $0.isASCIILetterOrDigit }) else {
                throw APIError(.invalidReason, "reason is a reason code such as 'ttl_expired' (letters, digits and '_')")
            }
            filter.reason = reason
        }
        if let platform, !platform.isEmpty {
            filter.destination = try Edge.parseJobDestination(platform)
        }
        return filter
    }

    /// A `limit` query parameter: `fallback` when absent, else 1 to `maximum`.
    static func limit(_ text: String?, fallback: Int, maximum: Int) throws -> Int {
        guard let text, !text.isEmpty else { return fallback }
        guard let value = Int(text), (1...maximum).contains(value) else {
            throw APIError(.invalidLimit, "limit must be a whole number from 1 to \(maximum)")
        }
        return value
    }
}
