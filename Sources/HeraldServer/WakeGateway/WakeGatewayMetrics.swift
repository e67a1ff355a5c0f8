/// What wakes by identity count, beside the wakes' own (``HeraldMetrics/wakeAcked(_:)``).
extension HeraldMetrics {
    static let identityWakes = CounterName("identity_wakes", "Wakes of an identity on a topic (the wake gateway)")

    /// A wake of an identity on a topic, and how many devices it reached.
    public func identityWoken(devices: Int) {
        wakes.count {
            $0.identityWakes += 1
            $0.devicesWoken += devices
        }
        increment(Self.identityWakes)
    }
}
