import Foundation
import HeraldWire

/// One phone of the fleet: it receives the pushes the APNs look-alike accepted for its token and
/// decides, with its own seeded luck, whether and when its app runs and can take the payment.
///
/// Both pushes come from Herald; the extension that the alert starts cannot finish a payment
/// (seed 004), so only a running app counts: woken in the background by the silent push, or
/// opened by the user after the alert. A running app reports presence (`POST …/presence`) at
/// once, so Herald's hints see it, and can take the payment after its node has started.
actor SimulatedPhone {
    enum PushKind: Sendable { case silent, alert }

    let strategy: WakeStrategy
    let device: DeviceRegistrationAnswer
    let http: FleetHTTP
    let options: WakeBenchOptions
    /// Separate draws per push kind, so which push arrives first cannot change either's luck, and
    /// payment i has the same luck under every strategy (a fair comparison).
    private var silentLuck: SplitMix64
    private var alertLuck: SplitMix64

    /// When the app can take the payment; nil while it is not running.
    private(set) var payableAt: ContinuousClock.Instant?
    private(set) var counts = PhoneCounts()
    private var reportedPresence = false

    init(strategy: WakeStrategy, device: DeviceRegistrationAnswer, payment: Int, http: FleetHTTP, options: WakeBenchOptions) {
        self.strategy = strategy
        self.device = device
        self.http = http
        self.options = options
        silentLuck = SplitMix64(seed: options.seed, payment: payment, purpose: 1)
        alertLuck = SplitMix64(seed: options.seed, payment: payment, purpose: 2)
    }

    /// Whether a payment attempt now would reach the app.
    func canTakePayment(at now: ContinuousClock.Instant) -> Bool {
        payableAt.map { $0 <= now } ?? false
    }

    /// When the first push reached the APNs look-alike.
    private(set) var firstPushAt: ContinuousClock.Instant?

    /// A push APNs accepted for this phone's token.
    func receive(_ kind: PushKind) async {
        if firstPushAt == nil { firstPushAt = ContinuousClock.now }
        switch kind {
        case .silent:
            counts.silentSent += 1
            guard strategy.usesSilent else { return }
            let delivered = !silentLuck.chance(options.silentDrop)
            let delay = silentLuck.uniform(options.pushDelay)
            let payable = silentLuck.uniform(options.backgroundComplete)
            guard delivered, (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
            counts.backgroundWakes += 1
            await appRuns(payableAfter: payable)
        case .alert:
            counts.alertSent += 1
            guard strategy.usesAlert else { return }
            let delay = alertLuck.uniform(options.pushDelay)
            let opens = !alertLuck.chance(options.neverOpen)
            let open = alertLuck.logNormal(median: options.openMedian, sigma: options.openSigma)
            let payable = alertLuck.uniform(options.openComplete)
            // Cancelled when every payment has ended: a user opening the app later changes nothing.
            guard opens, (try? await Task.sleep(for: .seconds(delay + open))) != nil else { return }
            counts.appOpens += 1
            await appRuns(payableAfter: payable)
        }
    }

    private func appRuns(payableAfter seconds: Double) async {
        let payable = ContinuousClock.now + .seconds(seconds)
        payableAt = min(payableAt ?? payable, payable)
        guard !reportedPresence else { return }
        reportedPresence = true
        let heartbeat = try? WireJSON.encode(PresenceHeartbeat(ttlSeconds: 30))
        let answer = await http.call("POST", "/api/v1/devices/\(device.deviceID)/presence", bearer: device.deviceSecret, json: heartbeat)
        if answer?.status != 200 { counts.presenceFailures += 1 }
    }
}

/// What happened on one phone.
struct PhoneCounts: Sendable {
    var silentSent = 0
    var alertSent = 0
    var backgroundWakes = 0
    var appOpens = 0
    var presenceFailures = 0

    static func + (a: PhoneCounts, b: PhoneCounts) -> PhoneCounts {
        PhoneCounts(
            silentSent: a.silentSent + b.silentSent, alertSent: a.alertSent + b.alertSent,
            backgroundWakes: a.backgroundWakes + b.backgroundWakes, appOpens: a.appOpens + b.appOpens,
            presenceFailures: a.presenceFailures + b.presenceFailures
        )
    }
}
