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
    /// or an alert rule finds `herald_wake_fallbacks_total` before the first fallback, and a
    /// rate over it starts from 0 rather than from nothing. Each room names its own.
    static let declaredAtZero: [CounterName] =
        deliveryCounters + wakeCounters + [identityWakes] + [nwcEvents]

    private func declareAtZero() {
        for counter in Self.declaredAtZero {
            guard let label = counter.label else {
                increment(counter, by: 0)
                continue
            }
            for value in label.values { increment(counter, label: value, by: 0) }
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

    /// Adds to a counter a room names once (``CounterName``), with its label's value if it has one.
    func increment(_ counter: CounterName, label value: String? = nil, by amount: Int64 = 1) {
        let labels = zip([counter.label?.name].compactMap { $0 }, [value].compactMap { $0 }).map { ($0, $1) }
        increment(counter.metric, help: counter.help, labels: labels, by: amount)
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

/// A counter's name and help, written once in its room: where it counts and where it is
/// declared at zero (``HeraldMetrics/declaredAtZero``).
struct CounterName: Sendable {
    let metric: String
    let help: String
    /// The one label the counter takes, with the values it is declared at zero with.
    var label: (name: String, values: [String])?

    init(_ metric: String, _ help: String, label: (name: String, values: [String])? = nil) {
        self.metric = metric
        self.help = help
        self.label = label
    }
}
