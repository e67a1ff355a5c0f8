import Prometheus

/// The NDS's Prometheus metrics, on a registry that is passed in rather than global.
public struct HeraldMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
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
    }

    public let queueDepth: Gauge
    public let retries: Counter
    public let sendLatency: DurationHistogram

    /// Webhooks accepted, by notification type.
    public func received(type: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "herald", metricName: "webhooks_received", unitName: "total",
                helpText: "Webhooks accepted into the outbox"
            ),
            labels: [("type", type)]
        ).increment()
    }

    /// One send's outcome, by provider.
    public func sent(provider: String, outcome: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "herald", metricName: "pushes_sent", unitName: "total",
                helpText: "Send attempts by provider and outcome"
            ),
            labels: [("provider", provider), ("outcome", outcome)]
        ).increment()
    }

    public func deadLettered(reason: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "herald", metricName: "dead_letters", unitName: "total",
                helpText: "Jobs given up on, by reason"
            ),
            labels: [("reason", reason)]
        ).increment()
    }

    /// The exposition text.
    public func render() -> String { registry.emitToString() }
}

import HeraldPush
import HeraldWire

extension PushRouter {
    /// The name of the provider serving a platform, for metrics and health: `none` if unset.
    public func providerName(for platform: Platform) -> String {
        provider(for: platform)?.name ?? "none"
    }
}
