/// What wakes by identity count, beside the wakes' own (``HeraldMetrics/wakeAcked(_:)``).
extension HeraldMetrics {
    /// A wake of an identity on a topic, and how many devices it reached.
    public func identityWoken(devices: Int) {
        wakes.count {
            $0.identityWakes += 1
            $0.devicesWoken += devices
        }
        increment("identity_wakes", help: "Wakes of an identity on a topic (the wake gateway)")
    }
}
