import HeraldPush
import HeraldWire
import NIOConcurrencyHelpers
import Prometheus

/// The NDS's Prometheus metrics, on a registry that is passed in rather than global. A class:
/// routes, intake and the dispatcher each hold it, and a struct of its dozen handles cost a
/// dozen retains and releases every time one was copied along a webhook's way.
public final class HeraldMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    /// The last minutes per 10 s, for the dashboard.
    public let activity: ActivityRing
    /// Wakes, acks and fallbacks since the start, for the dashboard.
    public let wakes = WakeTally()

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), activity: ActivityRing = ActivityRing()) {
        self.registry = registry
        self.activity = activity
        queueDepth = registry.makeGauge(
            descriptor: .init(
                namespace: "herald", metricName: "outbox_pending", unitName: "",
                helpText: "Jobs waiting to be sent or retried"
            )
        )
        retries = registry.makeCounter(
            descriptor: .init(
                namespace: "herald", metricName: "push_retries", unitName: "total",
                helpText: "Send attempts that will be retried"
            )
        )
        jobsInMemory = registry.makeGauge(
            descriptor: .init(
                namespace: "herald", metricName: "outbox_in_memory", unitName: "",
                helpText: "Jobs the dispatcher holds in memory (to send, sending, outcome to write)"
            )
        )
        jobsInMemoryPeak = registry.makeGauge(
            descriptor: .init(
                namespace: "herald", metricName: "outbox_in_memory_peak", unitName: "",
                helpText: "The most jobs the dispatcher has held in memory at once since start"
            )
        )
        outcomesAwaitingCommitPeak = registry.makeGauge(
            descriptor: .init(
                namespace: "herald", metricName: "outcomes_awaiting_commit_peak", unitName: "",
                helpText:
                    "The most send outcomes answered by the push service and not yet committed at once since start (each is a push a crash would send twice)"
            )
        )
        wakeToPresence = registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "herald", metricName: "wake_to_presence", unitName: "seconds",
                helpText: "Time from a wake push to the woken app reporting presence"
            ),
            labels: [],
            buckets: [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(5), .seconds(7), .seconds(10),
                .seconds(15), .seconds(20), .seconds(30),
            ]
        )
        sendLatency = registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "herald", metricName: "push_send_duration", unitName: "seconds",
                helpText: "Time from a send request to the push service's answer"
            ),
            labels: [],
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                .seconds(2.5), .seconds(5), .seconds(10),
            ]
        )
        declareAtZero()
    }

    /// Counters whose labels are known in advance, written at zero from the start: a dashboard
    /// or an alert rule finds `herald_dead_letters_total` before the first dead letter, and a
    /// rate over it starts from 0 rather than from nothing.
    private func declareAtZero() {
        for (metric, help) in [
            ("target_rate_limited", "Pushes refused because their device token had its share"),
            ("identity_wakes", "Wakes of an identity on a topic (the wake gateway)"),
            ("wake_fallbacks_scheduled", "Fallback alerts scheduled for wakes not yet handled"),
            ("wake_fallbacks_cancelled", "Fallback alerts cancelled because the device handled its wake"),
            ("wake_fallbacks", "Fallback alerts sent for wakes not handled in time"),
            ("sealed_pushes", "Pushes sealed to their device's key (HPKE) before they were stored"),
        ] {
            increment(metric, help: help, by: 0)
        }
        for outcome in WakeAckOutcome.allCases {
            increment("wake_acks", help: "Wakes acknowledged by devices, by outcome", labels: [("outcome", outcome.rawValue)], by: 0)
        }
        for outcome in ["seen", "forwarded", "deduplicated", "paced"] {
            increment("nwc_events", help: "NWC requests seen on relays, by what became of them", labels: [("outcome", outcome)], by: 0)
        }
        for reason in ["unconfirmed", "dead", "not_configured", "rate_limited"] {
            increment("devices_skipped", help: "Devices a push left out, by why", labels: [("reason", reason)], by: 0)
        }
    }

    public let queueDepth: Gauge
    public let wakeToPresence: DurationHistogram
    public let jobsInMemory: Gauge
    public let jobsInMemoryPeak: Gauge
    public let outcomesAwaitingCommitPeak: Gauge
    public let retries: Counter
    public let sendLatency: DurationHistogram
    private let counters = LabelledCounters()

    /// Webhooks accepted, by notification type. Callers choose the type (any event name passes
    /// through), so past ``maxTypeLabels`` distinct ones the rest count as `other`: a caller
    /// inventing names cannot grow the registry without bound.
    public func received(type: String) {
        activity.webhookReceived()
        counters.counter(for: ["webhooks_received", type], maxDistinct: Self.maxTypeLabels) { first in
            registry.makeCounter(
                descriptor: .init(
                    namespace: "herald", metricName: "webhooks_received", unitName: "total",
                    helpText: "Webhooks accepted into the outbox"
                ),
                labels: [("type", first ? type : "other")]
            )
        }.increment()
    }

    public static let maxTypeLabels = 64

    /// One send's outcome, by provider. Once per push: written out rather than through
    /// ``increment(_:help:labels:by:)``, so the label array is built once per counter, not per call.
    /// A send attempt's outcome. `app` is one of the configured apps (intake refuses others).
    /// `pushes`: the pushes the attempt wrote (a wake with its silent push ahead is two).
    public func sent(provider: String, outcome: String, app: String = "default", pushes: Int = 1) {
        activity.pushSent(provider: provider, outcome: outcome)
        counters.counter(for: ["pushes_sent", provider, outcome, app]) { _ in
            registry.makeCounter(
                descriptor: .init(
                    namespace: "herald", metricName: "pushes_sent", unitName: "total",
                    helpText: "Pushes written to a push service, by provider, the outcome of their job, and app"
                ),
                labels: [("provider", provider), ("outcome", outcome), ("app", app)]
            )
        }.increment(by: Int64(pushes))
    }

    public func deadLettered(reason: String) {
        increment("dead_letters", help: "Jobs given up on, by reason", labels: [("reason", reason)])
    }

    /// A push refused because its target had its share (`429 target_rate_limited`).
    public func rateLimited() {
        increment("target_rate_limited", help: "Pushes refused because their device token had its share")
    }

    /// A device that a push by identity or alias left out, by why (`unconfirmed`, `dead`,
    /// `not_configured`, `rate_limited`).
    public func deviceSkipped(_ reason: String) {
        increment("devices_skipped", help: "Devices a push left out, by why", labels: [("reason", reason)])
    }

    /// An NWC request seen on a relay, and what became of it: `seen`, `forwarded`, `deduplicated`.
    public func nwcEvent(_ outcome: String) {
        wakes.count { $0.nwc[outcome, default: 0] += 1 }
        increment("nwc_events", help: "NWC requests seen on relays, by what became of them", labels: [("outcome", outcome)])
    }

    /// An NWC request not forwarded, by reason.
    public func nwcRefused(_ reason: String) {
        wakes.count { $0.nwc["refused", default: 0] += 1 }
        increment("nwc_events_refused", help: "NWC requests not forwarded, by reason", labels: [("reason", reason)])
    }

    /// The NWC subscriptions (each a filter naming up to 256 wallet service keys) held on a relay now; 0 while it is not connected.
    public func nwcSubscriptions(relay: String, _ count: Int) {
        registry.makeGauge(
            descriptor: .init(namespace: "herald", metricName: "nwc_subscriptions", unitName: "", helpText: "NWC subscriptions held on each relay"),
            labels: [("relay", relay)]
        ).set(Int64(count))
    }

    /// A relay refused one of the NWC subscriptions (`CLOSED`, or a `NOTICE` past its limit):
    /// Herald splits them over more connections and subscribes again.
    public func nwcSubscriptionRefused(relay: String) {
        increment(
            "nwc_subscriptions_refused", help: "NWC subscriptions a relay refused (Herald then subscribes again with fewer per connection)",
            labels: [("relay", relay)])
    }

    /// Relays held open for NWC subscriptions now.
    public func nwcRelaysWatched(_ count: Int) {
        wakes.count { $0.nwcRelays = count }
        registry.makeGauge(
            descriptor: .init(namespace: "herald", metricName: "nwc_relays", unitName: "", helpText: "Relays held open for NWC subscriptions")
        )
        .set(Int64(count))
    }

    /// A push sealed to its device's key and committed to the outbox.
    public func sealed(count: Int = 1) {
        guard count > 0 else { return }
        increment("sealed_pushes", help: "Pushes sealed to their device's key (HPKE) before they were stored", by: Int64(count))
    }

    /// Adds to the counter `herald_<metric>_total` with these labels, made on first use: what
    /// each capability's own counters (in its folder) go through.
    func increment(_ metric: String, help: String, labels: [(String, String)] = [], by amount: Int64 = 1) {
        counters.counter(for: [metric] + labels.map(\.1)) { _ in
            registry.makeCounter(
                descriptor: .init(namespace: "herald", metricName: metric, unitName: "total", helpText: help),
                labels: labels
            )
        }.increment(by: amount)
    }

    /// The exposition text.
    public func render() -> String { registry.emitToString() }
}

extension PushRouter {
    /// The name of the provider serving a destination of an app, for metrics and health: `none`
    /// if unset.
    public func providerName(for destination: JobDestination, app: String = PushTarget.defaultApp) -> String {
        provider(for: destination, app: app)?.name ?? "none"
    }
}

/// Counters already made, by metric and label values. Making one through the registry builds
/// its name and looks it up under a lock on every call; that was 2% of a webhook's CPU.
final class LabelledCounters: Sendable {
    private struct State {
        var counters: [[String]: Counter] = [:]
        var distinct: [String: Int] = [:]
    }
    private let state = NIOLockedValueBox(State())

    /// The counter for `key` (metric name first), made on first use. With `maxDistinct`, only
    /// that many keys per metric get their own counter (`make(true)`); later ones share the one
    /// `make(false)` makes, stored under the metric name alone.
    func counter(for key: [String], maxDistinct: Int = .max, make: (_ own: Bool) -> Counter) -> Counter {
        state.withLockedValue { state in
            if let counter = state.counters[key] { return counter }
            let metric = key[0]
            let own = state.distinct[metric, default: 0] < maxDistinct
            let storedKey = own ? key : [metric]
            if let shared = state.counters[storedKey] { return shared }
            let counter = make(own)
            state.counters[storedKey] = counter
            if own { state.distinct[metric, default: 0] += 1 }
            return counter
        }
    }
}

/// What the dashboard shows of wakes by identity and NWC requests: counts since the process started.
public final class WakeTally: Sendable {
    public struct Counts: Sendable, Hashable {
        public var identityWakes = 0
        public var devicesWoken = 0
        public var acks: [String: Int] = [:]
        public var fallbacksScheduled = 0
        public var fallbacksCancelled = 0
        public var fallbacksSent = 0
        /// NWC requests by what became of them (`seen`, `forwarded`, `deduplicated`, `refused`).
        public var nwc: [String: Int] = [:]
        public var nwcRelays = 0
    }

    private let counts = NIOLockedValueBox(Counts())

    public var snapshot: Counts { counts.withLockedValue { $0 } }

    func count(_ change: (inout Counts) -> Void) { counts.withLockedValue(change) }
}
