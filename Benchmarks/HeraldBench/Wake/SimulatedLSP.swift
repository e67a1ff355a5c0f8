import Foundation
import HeraldWire

/// The sender side of one payment: the LSP holding an HTLC for the phone. It asks Herald to wake
/// the phone, then attempts the payment until it goes through or the hard stop passes.
///
/// Without hints it follows seed 004 §1.7.4: at once, then after 1 s, 3 s and 7 s, each plus up
/// to 0.5 s of jitter. With hints (§1.7.3) it asks `GET /forwarding_hint` after each failed
/// attempt: `retry_now` → again after its recommended delay (or `retryNowDelay`); `retry_later` → after the recommended delay
/// (waking it again when the reason is `disconnected`); `do_not_retry` → give up.
struct SimulatedLSP: Sendable {
    let http: FleetHTTP
    let wakeKey: String
    let options: WakeBenchOptions

    static let fixedDelays: [Double] = [1, 3, 7]
    static let amountMsat: UInt64 = 50_000_000

    struct Outcome: Sendable {
        /// From the wake call to the attempt that went through; nil when the hard stop came first.
        var completedAfter: Duration?
        /// From the wake call to the first push at the APNs look-alike.
        var pushAfter: Duration?
        /// From the moment the phone could take the payment to the attempt that took it.
        var attemptLag: Duration?
        var attempts = 0
        var wakeAnswers: [String] = []
        var hints: [String] = []
    }

    func pay(phone: SimulatedPhone, deviceID: String, paymentHash: String, payment: Int, hints: Bool) async -> Outcome {
        var jitter = SplitMix64(seed: options.seed, payment: payment, purpose: 3)
        var outcome = Outcome()
        let start = ContinuousClock.now
        let hardStop = start + .seconds(options.hardStop)
        let wake = try? WireJSON.encode(
            WakeRequest(device: deviceID, kind: .incomingHtlc, paymentHash: paymentHash, amountMsat: Self.amountMsat,
                        expiresAt: Date().addingTimeInterval(options.hardStop + 5)))

        func sendWake() async -> Bool {
            let answer = await http.call("POST", "/api/v1/wake", bearer: wakeKey, json: wake)
            let label: String
            switch answer?.status {
            case 202: label = "pushed"
            case 200: label = answer?.decode(WakeAnswer.self)?.reason?.rawValue ?? "200"
            case let status?: label = "HTTP \(status)"
            case nil: label = "no answer"
            }
            outcome.wakeAnswers.append(label)
            return answer.map { $0.status != 404 && $0.status != 410 } ?? true
        }

        guard await sendWake() else { return outcome }
        while true {
            let now = ContinuousClock.now
            outcome.attempts += 1
            if await phone.canTakePayment(at: now) {
                outcome.completedAfter = now - start
                outcome.pushAfter = await phone.firstPushAt.map { $0 - start }
                outcome.attemptLag = await phone.payableAt.map { now - $0 }
                return outcome
            }
            var delay: Double
            if hints {
                guard let answer = await http.call("GET", "/api/v1/forwarding_hint?recipient=\(deviceID)&amount_msat=\(Self.amountMsat)", bearer: wakeKey),
                    let hint = answer.decode(ForwardingHint.self)
                else {
                    // No hint: fall back to the fixed schedule's first step.
                    outcome.hints.append("none")
                    delay = Self.fixedDelays[0]
                    if ContinuousClock.now + .seconds(delay) > hardStop { return outcome }
                    try? await Task.sleep(for: .seconds(delay))
                    continue
                }
                outcome.hints.append(hint.hint.rawValue + "/" + hint.reason.rawValue)
                switch hint.hint {
                case .doNotRetry:
                    return outcome
                case .retryNow:
                    delay = hint.recommendedDelayMs.map { Double($0) / 1000 } ?? options.retryNowDelay
                case .retryLater:
                    if hint.reason == .disconnected { _ = await sendWake() }
                    delay = Double(hint.recommendedDelayMs ?? 1000) / 1000
                }
            } else {
                guard outcome.attempts <= Self.fixedDelays.count else { return outcome }
                delay = Self.fixedDelays[outcome.attempts - 1] + jitter.uniform(0...0.5)
            }
            // An attempt after the hard stop does not count; with hints the last one is made just before it.
            let next = ContinuousClock.now + .seconds(delay)
            if next > hardStop {
                let lastChance = hardStop - .milliseconds(20)
                guard hints, lastChance > ContinuousClock.now else { return outcome }
                try? await Task.sleep(until: lastChance, clock: .continuous)
                continue
            }
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }
}
