/// Every wait and timer of the server runs on the clock `buildApplication` is given:
/// `ContinuousClock` in production, a clock the test moves by hand in tests
/// (`HeraldTestSupport.ManualClock`), so a test drives time instead of waiting for it. Wall time
/// (expiries, timestamps on the wire) comes from the separate `now: () -> Date`.
extension Clock where Duration == Swift.Duration {
    /// A check that turns true once `duration` has passed on this clock, counted from now.
    func timer(after duration: Duration) -> @Sendable () -> Bool {
        let end = now.advanced(by: duration)
        return { self.now >= end }
    }

    /// The time left of `duration` on this clock, counted from now; never below zero.
    func countdown(_ duration: Duration) -> @Sendable () -> Duration {
        let end = now.advanced(by: duration)
        return { max(.zero, self.now.duration(to: end)) }
    }
}
