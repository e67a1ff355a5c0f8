import Prometheus

/// What NWC forwarding counts: requests seen on relays and what became of them, the
/// subscriptions relays hold or refuse, and the relays held open.
extension HeraldMetrics {
    static let nwcEvents = CounterName(
        "nwc_events", "NWC requests seen on relays, by what became of them",
        label: ("outcome", ["seen", "forwarded", "deduplicated", "paced"]))

    /// An NWC request seen on a relay, and what became of it: `seen`, `forwarded`, `deduplicated`.
    public func nwcEvent(_ outcome: String) {
        wakes.count { $0.nwc[outcome, default: 0] += 1 }
        increment(Self.nwcEvents, label: outcome)
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
}
