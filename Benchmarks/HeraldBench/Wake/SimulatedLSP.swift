import Foundation
import HeraldWire

/// The sender side of one payment: the LSP holding an HTLC for the phone. It asks Herald to wake
/// the phone, then attempts the payment on the `SenderRetryRunner` beside it (seed 004 §1.7): at
/// once, then after each failure the policy's wait (1 s, 3 s, 7 s + jitter by default) or, with
/// hints, the wait `GET /forwarding_hint` recommends; never after the hard stop.
struct SimulatedLSP: Sendable {
    let http: FleetHTTP
    let wakeKey: String
    let options: WakeBenchOptions

    static let amountMsat: UInt64 = 50_000_000

    struct Outcome: Sendable {
        /// From the wake call to the attempt that went through; nil when the sender gave up.
        var completedAfter: Duration?
        /// Why the sender gave up.
        var stop: String?
        /// From the wake call to the first push at the APNs look-alike.
        var pushAfter: Duration?
        /// From the moment the phone could take the payment to the attempt that took it.
        var attemptLag: Duration?
        var attempts = 0
        var wakeAnswers: [String] = []
        var hints: [String] = []
    }

    /// Collects the wake answers while the runner owns the attempts.
    private actor Log {
        var wakeAnswers: [String] = []
        func add(_ answer: String) { wakeAnswers.append(answer) }
    }

    func pay(phone: SimulatedPhone, deviceID: String, paymentHash: String, payment: Int, strategy: WakeStrategy) async -> Outcome {
        let hints = strategy.usesHints
        var jitter = SplitMix64(seed: options.seed, payment: payment, purpose: 3)
        let log = Log()
        let start = ContinuousClock.now
        let wake = try? WireJSON.encode(
            WakeRequest(
                device: deviceID, kind: .incomingHtlc, paymentHash: paymentHash, amountMsat: Self.amountMsat,
                expiresAt: Date().addingTimeInterval(options.hardStop + 5), wakeAlert: strategy.wakeAlert,
                fallbackAfterSecs: strategy.fallbackAfter))

        /// Whether the device can still be woken (not 404/410).
        func sendWake() async -> Bool {
            let answer = await http.call("POST", "/api/v1/wake", bearer: wakeKey, json: wake)
            let label: String
            switch answer?.status {
            case 202: label = "pushed"
            case 200: label = answer?.decode(WakeAnswer.self)?.reason?.rawValue ?? "200"
            case let status?: label = "HTTP \(status)"
            case nil: label = "no answer"
            }
            await log.add(label)
            return answer.map { $0.status != 404 && $0.status != 410 } ?? true
        }

        var outcome = Outcome()
        guard await sendWake() else {
            outcome.wakeAnswers = await log.wakeAnswers
            return outcome
        }
        let runner = SenderRetryRunner(policy: options.retryPolicy)
        let attempt = { () async -> AttemptResult<Duration> in
            let now = ContinuousClock.now
            // A phone whose app is not running has its channel disconnected: the sender's node
            // sees the peer as unreachable, a "maybe" failure worth retrying.
            return await phone.canTakePayment(at: now) ? .success(now - start) : .failure(.nodeUnreachable)
        }
        let result: RetryOutcome<Duration>
        if hints {
            let path = "/api/v1/forwarding_hint?recipient=\(deviceID)&amount_msat=\(Self.amountMsat)"
            result = await runner.run(
                using: &jitter,
                forwardingHint: {
                    guard let hint = await http.call("GET", path, bearer: wakeKey)?.decode(ForwardingHint.self) else {
                        throw WakeBenchFailure("no forwarding hint")
                    }
                    // "Disconnected": neither present nor woken lately. Wake it, then retry.
                    if hint.hint == .retryLater, hint.reason == .disconnected { _ = await sendWake() }
                    return hint
                }, attempt: attempt)
        } else {
            result = await runner.run(using: &jitter, attempt: attempt)
        }
        outcome.attempts = result.attempts.count
        outcome.hints = result.attempts.compactMap { $0.hint.map { $0.hint.rawValue + "/" + $0.reason.rawValue } }
        outcome.wakeAnswers = await log.wakeAnswers
        switch result.result {
        case .success(let after):
            outcome.completedAfter = after
            // The wallet took the payment: the plugin acks `handled`, which cancels a fallback alert.
            await phone.tookPayment()
            outcome.pushAfter = await phone.firstPushAt.map { $0 - start }
            outcome.attemptLag = await phone.payableAt.map { start + after - $0 }
        case .failure:
            outcome.stop = result.stop?.rawValue
        }
        return outcome
    }
}
