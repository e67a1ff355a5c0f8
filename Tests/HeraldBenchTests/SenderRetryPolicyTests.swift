import Foundation
import HeraldWire
import Testing

@testable import herald_bench

/// A clock that never waits: sleeping moves it forward by exactly the time asked for.
final class SteppingClock: RetryClock, @unchecked Sendable {
    // Guarded by `lock`: the runner reads and sleeps from its own task.
    private let lock = NSLock()
    private var elapsed: Duration = .zero
    private var slept: [Duration] = []

    var sleeps: [Duration] { lock.withLock { slept } }

    var now: Duration { lock.withLock { elapsed } }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        lock.withLock {
            slept.append(duration)
            elapsed += duration
        }
    }

    /// What an attempt or a hint lookup costs in time.
    func advance(_ duration: Duration) { lock.withLock { elapsed += duration } }
}

/// Hands out the given values, then zeros: jitter fractions a test can name exactly.
struct ScriptedRandom: RandomNumberGenerator {
    var values: [UInt64]
    mutating func next() -> UInt64 { values.isEmpty ? 0 : values.removeFirst() }
    /// The value whose top 53 bits make `fraction` of the maximum jitter.
    static func fraction(_ fraction: Double) -> UInt64 { UInt64(fraction * Double(UInt64(1) << 53)) << 11 }
}

/// Xorshift64: a seeded generator for the tests that only need "some" jitter, reproducibly.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

@Suite("Sender retry policy (seed 004 §1.7)")
struct SenderRetryPolicyTests {
    static let neverRetryable: [PaymentFailure] = [
        .invoiceExpired, .amountTooHigh, .amountBelowMinimum, .unsupportedFeatures, .incorrectPaymentDetails,
        .recipientRejected, .permanentPolicy,
    ]
    static let maybeRetryable: [PaymentFailure] = [
        .routeNotFound, .temporaryChannelFailure, .nodeUnreachable, .feeOrCLTVConstraints, .other("HTLC timed out"),
    ]

    @Test("failures are classified as seed 004 §1.7.1 lists them")
    func classification() {
        for failure in Self.neverRetryable { #expect(failure.retryability == .never, "\(failure)") }
        for failure in Self.maybeRetryable { #expect(failure.retryability == .maybe, "\(failure)") }
        #expect(PaymentFailure.other("local timeout", retryability: .retryable).retryability == .retryable)
    }

    @Test("the hard stop is kept within 10–15 s")
    func hardStopClamped() {
        #expect(SenderRetryPolicy().hardStop == .seconds(12))
        #expect(SenderRetryPolicy(hardStop: .seconds(3)).hardStop == .seconds(10))
        #expect(SenderRetryPolicy(hardStop: .seconds(60)).hardStop == .seconds(15))
        #expect(SenderRetryPolicy(hardStop: .seconds(14)).hardStop == .seconds(14))
    }

    @Test("attempts start at once, then 1 s, 3 s and 7 s after each failure, plus the drawn jitter")
    func plainScheduleExactTimes() async {
        let clock = SteppingClock()
        let runner = SenderRetryRunner(policy: SenderRetryPolicy(hardStop: .seconds(15)), clock: clock)
        // Jitter fractions 0.5, 0 and 0.25 of 500 ms.
        var random = ScriptedRandom(values: [ScriptedRandom.fraction(0.5), 0, ScriptedRandom.fraction(0.25)])
        let outcome: RetryOutcome<String> = await runner.run(using: &random) { .failure(.routeNotFound) }
        #expect(outcome.attempts.map(\.startedAt) == [.zero, .milliseconds(1250), .milliseconds(4250), .milliseconds(11_375)])
        #expect(clock.sleeps == [.milliseconds(1250), .milliseconds(3000), .milliseconds(7125)])
        #expect(outcome.stop == .attemptsExhausted)
        #expect(outcome.attempts.map(\.number) == [1, 2, 3, 4])
        guard case .failure(.routeNotFound) = outcome.result else {
            Issue.record("result \(outcome.result)")
            return
        }
    }

    @Test("seeded jitter stays within 0–500 ms per wait and reproduces the same times")
    func seededJitter() async {
        func times(seed: UInt64) async -> [Duration] {
            let runner = SenderRetryRunner(policy: SenderRetryPolicy(hardStop: .seconds(15)), clock: SteppingClock())
            var random = SeededRandom(state: seed)
            let outcome: RetryOutcome<Int> = await runner.run(using: &random) { .failure(.nodeUnreachable) }
            return outcome.attempts.map(\.startedAt)
        }
        let first = await times(seed: 42)
        #expect(first == (await times(seed: 42)))
        #expect(first.count == 4)
        let base: [Duration] = [.zero, .seconds(1), .seconds(4), .seconds(11)]
        for (index, time) in first.enumerated() {
            #expect(time >= base[index])
            #expect(time <= base[index] + .milliseconds(500) * index)
        }
    }

    @Test("an attempt that would start after the hard stop is not made")
    func hardStopHonoured() async {
        let clock = SteppingClock()
        let runner = SenderRetryRunner(policy: SenderRetryPolicy(hardStop: .seconds(12)), clock: clock)
        // 1.5 + 3.5 + 7.5 = 12.5 s: the fourth attempt would start past 12 s.
        var random = ScriptedRandom(values: Array(repeating: UInt64.max, count: 3))
        let outcome: RetryOutcome<Int> = await runner.run(using: &random) { .failure(.temporaryChannelFailure) }
        #expect(outcome.attempts.count == 3)
        #expect(outcome.stop == .hardStop)
        #expect(clock.now < .seconds(12))
    }

    @Test("slow attempts count against the hard stop")
    func slowAttemptsUseTheWindow() async {
        let clock = SteppingClock()
        let runner = SenderRetryRunner(policy: SenderRetryPolicy(maxJitter: .zero, hardStop: .seconds(10)), clock: clock)
        var random = ScriptedRandom(values: [])
        let outcome: RetryOutcome<Int> = await runner.run(using: &random) {
            clock.advance(.seconds(3))
            return .failure(.routeNotFound)
        }
        // 0 → fails at 3; 4 → fails at 7; 7 + 3 = 10 ≤ 10 → fails at 13; 13 + 7 > 10: stop.
        #expect(outcome.attempts.map(\.startedAt) == [.zero, .seconds(4), .seconds(10)])
        #expect(outcome.stop == .hardStop)
    }

    @Test("a failure that is never retryable stops after one attempt", arguments: neverRetryable)
    func neverRetried(_ failure: PaymentFailure) async {
        let clock = SteppingClock()
        let runner = SenderRetryRunner(clock: clock)
        var random = SeededRandom(state: 1)
        var hintsAsked = 0
        let outcome: RetryOutcome<Int> = await runner.run(
            using: &random,
            forwardingHint: {
                hintsAsked += 1
                return ForwardingHint(hint: .retryNow, reason: .present)
            },
            attempt: { .failure(failure) }
        )
        #expect(outcome.attempts.count == 1)
        #expect(outcome.stop == .notRetryable)
        #expect(hintsAsked == 0)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("a success ends the attempts with its value")
    func successStops() async {
        let clock = SteppingClock()
        let runner = SenderRetryRunner(clock: clock)
        var random = ScriptedRandom(values: [])
        var calls = 0
        let outcome: RetryOutcome<String> = await runner.run(using: &random) {
            calls += 1
            return calls == 2 ? .success("preimage") : .failure(.routeNotFound)
        }
        #expect(calls == 2)
        #expect(outcome.stop == nil)
        #expect(outcome.attempts.map(\.startedAt) == [.zero, .seconds(1)])
        #expect(outcome.attempts.last?.failure == nil)
        #expect((try? outcome.result.get()) == "preimage")
    }

    @Test("do_not_retry stops at once")
    func doNotRetryHint() async {
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        let outcome: RetryOutcome<Int> = await SenderRetryRunner(clock: clock).run(
            using: &random,
            forwardingHint: { ForwardingHint(hint: .doNotRetry, reason: .tokenUnregistered) },
            attempt: { .failure(.routeNotFound) }
        )
        #expect(outcome.attempts.count == 1)
        #expect(outcome.stop == .doNotRetryHint)
        #expect(outcome.attempts[0].hint?.reason == .tokenUnregistered)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("retry_now waits the recommended delay (250 ms without one), half as long again for each further one in a row, up to 1 s")
    func retryNowHint() async {
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        var delays: [Int?] = [800, nil, 100]
        let outcome: RetryOutcome<Int> = await SenderRetryRunner(clock: clock).run(
            using: &random,
            forwardingHint: {
                ForwardingHint(hint: .retryNow, reason: .present, recommendedDelayMs: delays.isEmpty ? 250 : delays.removeFirst())
            },
            attempt: { .failure(.routeNotFound) }
        )
        #expect(
            Array(clock.sleeps.prefix(6)) == [
                .milliseconds(800), .milliseconds(375), .milliseconds(562), .milliseconds(843), .seconds(1), .seconds(1),
            ])
        // Hints guide it to the hard stop (12 s), not to the plain schedule's four attempts.
        #expect(outcome.stop == .hardStop)
        #expect(outcome.attempts.count == 15)
        #expect(outcome.attempts.last?.startedAt == .seconds(12))
    }

    @Test("retry_later waits the recommended delay (5 s without one) but never past the hard stop")
    func retryLaterHint() async {
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        var delays: [Int?] = [nil, 4000, 9000]
        let outcome: RetryOutcome<Int> = await SenderRetryRunner(policy: SenderRetryPolicy(hardStop: .seconds(12)), clock: clock).run(
            using: &random,
            forwardingHint: {
                ForwardingHint(hint: .retryLater, reason: .waking, recommendedDelayMs: delays.isEmpty ? nil : delays.removeFirst())
            },
            attempt: { .failure(.nodeUnreachable) }
        )
        // 5 s, then 4 s, then 9 s cut to the 3 s left before the hard stop: one last attempt there.
        #expect(clock.sleeps == [.seconds(5), .seconds(4), .seconds(3)])
        #expect(outcome.attempts.map(\.startedAt) == [.zero, .seconds(5), .seconds(9), .seconds(12)])
        #expect(outcome.attempts.allSatisfy { $0.hint?.hint == .retryLater })
        #expect(outcome.stop == .hardStop)
    }

    @Test("a recipient that is waking stays in play past four attempts: short retry_later waits until it takes the payment")
    func wakingRecipient() async {
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        var calls = 0
        let outcome: RetryOutcome<String> = await SenderRetryRunner(clock: clock).run(
            using: &random,
            forwardingHint: { ForwardingHint(hint: .retryLater, reason: .waking, recommendedDelayMs: 1000) },
            attempt: {
                calls += 1
                return calls == 8 ? .success("paid") : .failure(.temporaryChannelFailure)
            }
        )
        #expect((try? outcome.result.get()) == "paid")
        #expect(outcome.attempts.count == 8)
        #expect(outcome.attempts.last?.startedAt == .seconds(7))
    }

    @Test("the hinted attempts are capped, so a recipient that never takes the payment cannot loop")
    func hintedCap() async {
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        var policy = SenderRetryPolicy(hardStop: .seconds(15))
        policy.maxHintedAttempts = 5
        let outcome: RetryOutcome<Int> = await SenderRetryRunner(policy: policy, clock: clock).run(
            using: &random,
            forwardingHint: { ForwardingHint(hint: .retryLater, reason: .waking, recommendedDelayMs: 100) },
            attempt: { .failure(.routeNotFound) }
        )
        #expect(outcome.attempts.count == 5)
        #expect(outcome.stop == .attemptsExhausted)
    }

    @Test("a failing hint source falls back to the plain schedule")
    func hintSourceFailsFallsBack() async {
        struct Unreachable: Error {}
        let clock = SteppingClock()
        var random = ScriptedRandom(values: [])
        var asked = 0
        let outcome: RetryOutcome<Int> = await SenderRetryRunner(policy: SenderRetryPolicy(maxJitter: .zero), clock: clock).run(
            using: &random,
            forwardingHint: {
                asked += 1
                throw Unreachable()
            },
            attempt: { .failure(.routeNotFound) }
        )
        #expect(asked == 4)
        #expect(outcome.attempts.map(\.startedAt) == [.zero, .seconds(1), .seconds(4), .seconds(11)])
        #expect(outcome.attempts.allSatisfy { $0.hint == nil })
        #expect(outcome.stop == .attemptsExhausted)
    }

    @Test("a cancelled sender stops waiting")
    func cancelled() async {
        let task = Task {
            var random = ScriptedRandom(values: [])
            let outcome: RetryOutcome<Int> = await SenderRetryRunner(clock: SteppingClock()).run(using: &random) {
                withUnsafeCurrentTask { $0?.cancel() }
                return .failure(.routeNotFound)
            }
            return outcome
        }
        let outcome = await task.value
        #expect(outcome.stop == .cancelled)
        #expect(outcome.attempts.count == 1)
    }
}
