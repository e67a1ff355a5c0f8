import HeraldStore
import HeraldWire

/// What wakes count: requests, the pushes they queue, why some are not pushed, hints, and the
/// acks and fallback alerts of wakes kept in the ledger (the gateway's and Herald's own).
extension HeraldMetrics {
    static let wakeAcks = CounterName(
        "wake_acks", "Wakes acknowledged by devices, by outcome", label: ("outcome", WakeAckOutcome.allCases.map(\.rawValue)))
    static let wakeFallbacksScheduled = CounterName("wake_fallbacks_scheduled", "Fallback alerts scheduled for wakes not yet handled")
    static let wakeFallbacksCancelled = CounterName(
        "wake_fallbacks_cancelled", "Fallback alerts cancelled because the device handled its wake")
    static let wakeFallbacksSent = CounterName("wake_fallbacks", "Fallback alerts sent for wakes not handled in time")
    static let wakeCounters = [wakeAcks, wakeFallbacksScheduled, wakeFallbacksCancelled, wakeFallbacksSent]

    /// A wake asked for, by kind (known kinds by name, the rest as `other`: callers choose it).
    public func wakeRequested(kind: WakeKind) {
        increment("wakes_requested", help: "Wakes asked for, by kind", labels: [("kind", WakeKindLabel.of(kind))])
    }

    /// A wake push committed to the outbox: `silent` and `alert` on iOS, `data` on Android.
    public func wakePushed(_ push: String) {
        increment("wake_pushes", help: "Wake pushes queued, by push (silent, alert, data)", labels: [("push", push)])
    }

    /// A wake not pushed: `present` (told on the stream instead) or `recently_woken`.
    public func wakeSkipped(reason: String) {
        increment("wakes_skipped", help: "Wakes not pushed, by reason", labels: [("reason", reason)])
    }

    /// A forwarding hint given, by hint.
    public func hintGiven(_ hint: ForwardingHint.Hint) {
        increment("forwarding_hints", help: "Forwarding hints given, by hint", labels: [("hint", hint.rawValue)])
    }

    /// A device's answer to a wake, by outcome (`handled`, `received`, `no_handler`, `failed`).
    public func wakeAcked(_ outcome: WakeAckOutcome) {
        wakes.count { $0.acks[outcome.rawValue, default: 0] += 1 }
        increment(Self.wakeAcks, label: outcome.rawValue)
    }

    /// A fallback alert scheduled for a device that may not handle its wake in time.
    public func wakeFallbackScheduled() {
        wakes.count { $0.fallbacksScheduled += 1 }
        increment(Self.wakeFallbacksScheduled)
    }

    /// A fallback alert cancelled by a `handled` ack before it was sent.
    public func wakeFallbackCancelled() {
        wakes.count { $0.fallbacksCancelled += 1 }
        increment(Self.wakeFallbacksCancelled)
    }

    /// A fallback alert sent: the device did not acknowledge `handled` in time.
    public func wakeFallbackSent() {
        wakes.count { $0.fallbacksSent += 1 }
        increment(Self.wakeFallbacksSent)
    }
}

/// The metric label of a wake kind: callers choose kinds, so only Herald's own get their name.
enum WakeKindLabel {
    static let known = Set(WakeKind.known)
    static func of(_ kind: WakeKind) -> String { known.contains(kind) ? kind.rawValue : "other" }
}
