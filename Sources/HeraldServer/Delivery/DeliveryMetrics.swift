/// What the delivery counts besides sends: pushes refused for their device's share, devices a
/// push left out, and pushes sealed before they were stored.
extension HeraldMetrics {
    static let targetRateLimited = CounterName("target_rate_limited", "Pushes refused because their device token had its share")
    static let devicesSkipped = CounterName(
        "devices_skipped", "Devices a push left out, by why", label: ("reason", ["unconfirmed", "dead", "not_configured", "rate_limited"]))
    static let sealedPushes = CounterName("sealed_pushes", "Pushes sealed to their device's key (HPKE) before they were stored")
    static let deliveryCounters = [targetRateLimited, devicesSkipped, sealedPushes]

    /// A push refused because its target had its share (`429 target_rate_limited`).
    public func rateLimited() {
        increment(Self.targetRateLimited)
    }

    /// A device that a push by identity or alias left out, by why (`unconfirmed`, `dead`,
    /// `not_configured`, `rate_limited`).
    public func deviceSkipped(_ reason: String) {
        increment(Self.devicesSkipped, label: reason)
    }

    /// A push sealed to its device's key and committed to the outbox.
    public func sealed(count: Int = 1) {
        guard count > 0 else { return }
        increment(Self.sealedPushes, by: Int64(count))
    }
}
