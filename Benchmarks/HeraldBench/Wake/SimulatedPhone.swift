import Foundation
import HeraldTestSupport
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
    let rules: WakePushRules
    let device: DeviceRegistrationAnswer
    let http: FleetHTTP
    let options: WakeBenchOptions
    /// Separate draws per push kind, so which push arrives first cannot change either's luck, and
    /// payment i has the same luck under every strategy (a fair comparison).
    private var silentLuck: SplitMix64
    private var alertLuck: SplitMix64
    /// Whether and how long the phone is out of reach, and the order APNs sees its pushes in.
    private var reachLuck: SplitMix64
    /// While out of reach: until when, and the pushes APNs accepted meanwhile, in arrival order.
    private var backAt: ContinuousClock.Instant?
    private var arrivedWhileAway: [(kind: PushKind, expiration: String?)] = []

    /// When the app can take the payment; nil while it is not running.
    private(set) var payableAt: ContinuousClock.Instant?
    private var counts = PhoneCounts()
    /// What happened on this phone, read once the run is over.
    var summary: PhoneCounts {
        var summary = counts
        summary.completedWithoutAlert = taken && counts.alertsShown == 0 ? 1 : 0
        return summary
    }
    private var reportedPresence = false
    /// The wake's id, from the first push that carried it.
    private var wakeID: String?
    /// The wallet took the payment (the sender's attempt went through).
    private var taken = false

    init(
        strategy: WakeStrategy, rules: WakePushRules, device: DeviceRegistrationAnswer, payment: Int, http: FleetHTTP,
        options: WakeBenchOptions
    ) {
        self.strategy = strategy
        self.rules = rules
        self.device = device
        self.http = http
        self.options = options
        silentLuck = SplitMix64(seed: options.seed, payment: payment, purpose: 1)
        alertLuck = SplitMix64(seed: options.seed, payment: payment, purpose: 2)
        reachLuck = SplitMix64(seed: options.seed, payment: payment, purpose: 5)
    }

    /// Whether a payment attempt now would reach the app.
    func canTakePayment(at now: ContinuousClock.Instant) -> Bool {
        payableAt.map { $0 <= now } ?? false
    }

    /// When the first push reached the APNs look-alike.
    private(set) var firstPushAt: ContinuousClock.Instant?

    /// A push APNs accepted for this phone's token, with its `apns-expiration`.
    func receive(_ kind: PushKind, expiration: String?, wakeID: String? = nil) async {
        let now = ContinuousClock.now
        if self.wakeID == nil { self.wakeID = wakeID }
        if firstPushAt == nil {
            firstPushAt = now
            if reachLuck.chance(options.offline) {
                backAt = now + .seconds(reachLuck.uniform(options.offlineFor))
                counts.outOfReach += 1
            }
        }
        switch kind {
        case .silent: counts.silentSent += 1
        case .alert: counts.alertSent += 1
        }
        guard let backAt, now < backAt else {
            await deliver(kind)
            return
        }
        arrivedWhileAway.append((kind, expiration))
        // The first push held waits for the phone's return; later ones only join the queue.
        guard arrivedWhileAway.count == 1, (try? await Task.sleep(until: backAt)) != nil else { return }
        var arrived = arrivedWhileAway
        arrivedWhileAway = []
        // Herald writes the silent push first; APNs may still swap the two. Before, the two
        // were sent concurrently: either could reach APNs last.
        let swapChance = rules == .today ? 0.5 : options.reorder
        if arrived.count == 2, reachLuck.chance(swapChance) { arrived.reverse() }
        var slot = APNsOfflineSlot<PushKind>()
        let arrivalTime = Date()
        for push in arrived {
            // Before, both pushes carried the wake's expiry: both storable.
            let expiration = rules == .today ? String(Int64(arrivalTime.timeIntervalSince1970) + 3600) : push.expiration
            slot.arrive(push.kind, expiration: expiration, now: arrivalTime)
        }
        guard let held = slot.handOver(now: arrivalTime) else {
            counts.heldNothing += 1
            return
        }
        switch held {
        case .silent: counts.heldSilent += 1
        case .alert: counts.heldAlert += 1
        }
        await deliver(held)
    }

    /// A push reaches the phone: whether and when the app runs because of it.
    private func deliver(_ kind: PushKind) async {
        switch kind {
        case .silent:
            guard strategy.usesSilent else { return }
            let delivered = !silentLuck.chance(options.silentDrop)
            let delay = silentLuck.uniform(options.pushDelay)
            let payable = silentLuck.uniform(options.backgroundComplete)
            guard delivered, (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
            counts.backgroundWakes += 1
            // The plugin, started by the wake, says so at once: a fallback alert waits longer.
            if !taken, options.acksReceived { await acknowledge(.received) }
            await appRuns(payableAfter: payable)
        case .alert:
            guard strategy.usesAlert else { return }
            let delay = alertLuck.uniform(options.pushDelay)
            let opens = !alertLuck.chance(options.neverOpen)
            let open = alertLuck.logNormal(median: options.openMedian, sigma: options.openSigma)
            let payable = alertLuck.uniform(options.openComplete)
            // Cancelled when every payment has ended: a user opening the app later changes nothing.
            guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
            counts.alertsShown += 1
            if taken { counts.alertsAfterTaken += 1 }
            guard opens, (try? await Task.sleep(for: .seconds(open))) != nil else { return }
            counts.appOpens += 1
            await appRuns(payableAfter: payable)
        }
    }

    /// The sender's attempt went through: the running app's plugin acknowledges the wake
    /// `handled`, as `HeraldDevice` does, which cancels a fallback alert not yet sent.
    func tookPayment() async {
        taken = true
        await acknowledge(.handled)
    }

    private func acknowledge(_ outcome: WakeAckOutcome) async {
        guard let wakeID, let body = try? WireJSON.encode(WakeAck(id: wakeID, outcome: outcome)) else { return }
        let answer = await http.call("POST", "/api/v1/devices/\(device.deviceID)/acks", bearer: device.deviceSecret, json: body)
        if answer?.status == 204 { counts.acks += 1 } else { counts.ackFailures += 1 }
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
    /// Phones out of reach at the wake, and what APNs handed them on their return.
    var outOfReach = 0
    var heldAlert = 0
    var heldSilent = 0
    var heldNothing = 0
    /// Alerts that reached the phone and showed (with the strategy's phones reading alerts).
    var alertsShown = 0
    /// Of those, alerts that showed after the payment had gone through: a bother for nothing.
    var alertsAfterTaken = 0
    /// Payments taken before any alert showed.
    var completedWithoutAlert = 0
    /// `received` and `handled` acks Herald took, and those it did not.
    var acks = 0
    var ackFailures = 0

    static func + (a: PhoneCounts, b: PhoneCounts) -> PhoneCounts {
        PhoneCounts(
            silentSent: a.silentSent + b.silentSent, alertSent: a.alertSent + b.alertSent,
            backgroundWakes: a.backgroundWakes + b.backgroundWakes, appOpens: a.appOpens + b.appOpens,
            presenceFailures: a.presenceFailures + b.presenceFailures, outOfReach: a.outOfReach + b.outOfReach,
            heldAlert: a.heldAlert + b.heldAlert, heldSilent: a.heldSilent + b.heldSilent, heldNothing: a.heldNothing + b.heldNothing,
            alertsShown: a.alertsShown + b.alertsShown, alertsAfterTaken: a.alertsAfterTaken + b.alertsAfterTaken,
            completedWithoutAlert: a.completedWithoutAlert + b.completedWithoutAlert, acks: a.acks + b.acks,
            ackFailures: a.ackFailures + b.ackFailures
        )
    }
}
