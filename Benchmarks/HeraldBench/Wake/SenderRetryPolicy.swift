import Foundation
import HeraldWire

/// Whether a failed payment is worth trying again (seed 004 §1.7.1).
public enum Retryability: String, Sendable, Hashable {
    /// Transient by nature: retry on the schedule.
    case retryable
    /// Could change within seconds (a sleeping phone's channel reconnecting, a route appearing):
    /// retry on the schedule, or as a forwarding hint says.
    case maybe
    /// No retry can succeed; fail at once with an actionable message.
    case never
}

/// Why a payment to a mobile wallet failed, as the sender's node reports it (seed 004 §1.7.1).
public enum PaymentFailure: Error, Sendable, Hashable {
    case invoiceExpired
    case amountTooHigh
    case amountBelowMinimum
    /// Onion or invoice feature mismatch.
    case unsupportedFeatures
    /// Incorrect payment details, including an unknown payment hash.
    case incorrectPaymentDetails
    /// The final recipient refused it (wrong preimage, incorrect amount).
    case recipientRejected
    case permanentPolicy
    case routeNotFound
    case temporaryChannelFailure
    case nodeUnreachable
    /// Fees or CLTV deltas that the next attempt may meet.
    case feeOrCLTVConstraints
    /// Anything else; the caller may classify it itself.
    case other(String, retryability: Retryability = .maybe)

    /// The seed's split. The four "maybe" failures are what a recipient whose phone is asleep
    /// looks like from the sender: its channel is disconnected until the app opens, so a retry
    /// within seconds often succeeds. An unclassified failure also counts as `maybe`: the hard
    /// stop bounds what a wrong guess costs, while a wrong `never` loses the payment.
    public var retryability: Retryability {
        switch self {
        case .invoiceExpired, .amountTooHigh, .amountBelowMinimum, .unsupportedFeatures, .incorrectPaymentDetails,
            .recipientRejected, .permanentPolicy:
            return .never
        case .routeNotFound, .temporaryChannelFailure, .nodeUnreachable, .feeOrCLTVConstraints:
            return .maybe
        case .other(_, let retryability):
            return retryability
        }
    }
}

/// The schedule of a sender's automatic retries (seed 004 §1.7.4): at once, then 1 s, 3 s and
/// 7 s after each failure, each plus jitter, and no attempt after the hard stop.
public struct SenderRetryPolicy: Sendable, Hashable {
    /// The wait after each failed attempt, before the next; one more attempt than delays.
    public var delays: [Duration]
    /// Each wait gets a random extra of up to this, so senders failing together do not retry together.
    public var maxJitter: Duration
    /// Measured from the first attempt: no attempt starts after it. Kept within ``allowedHardStop``.
    public private(set) var hardStop: Duration

    /// The seed's window: long enough for a woken user to open the app, short enough to wait for.
    public static let allowedHardStop: ClosedRange<Duration> = .seconds(10) ... .seconds(15)
    public static let defaultDelays: [Duration] = [.seconds(1), .seconds(3), .seconds(7)]

    /// `hardStop` outside ``allowedHardStop`` is clamped into it.
    public init(
        delays: [Duration] = defaultDelays, maxJitter: Duration = .milliseconds(500), hardStop: Duration = .seconds(12)
    ) {
        self.delays = delays
        self.maxJitter = max(maxJitter, .zero)
        self.hardStop = min(max(hardStop, Self.allowedHardStop.lowerBound), Self.allowedHardStop.upperBound)
    }

    public var maxAttempts: Int { delays.count + 1 }

    /// Attempts at most when forwarding hints guide the waits: the hard stop is the real
    /// limit; this only bounds a recipient that stays `retry_now` without taking the payment.
    public var maxHintedAttempts = 30

    /// The wait after failed attempt `attempt` (1-based) with its jitter; nil when none follows.
    public func delay(after attempt: Int, using random: inout some RandomNumberGenerator) -> Duration? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        return delays[attempt - 1] + jitter(using: &random)
    }

    /// Up to ``maxJitter``, from the generator's top 53 bits, so a test generator can pick it exactly.
    func jitter(using random: inout some RandomNumberGenerator) -> Duration {
        let fraction = Double(random.next() >> 11) / Double(UInt64(1) << 53)
        let nanoseconds = Double(maxJitter.components.seconds) * 1e9 + Double(maxJitter.components.attoseconds) / 1e9
        return .nanoseconds(Int64((nanoseconds * fraction).rounded(.down)))
    }
}

/// The time a retry runner reads and waits on; tests give one that advances when slept on.
public protocol RetryClock: Sendable {
    /// Time since a fixed origin.
    var now: Duration { get }
    func sleep(for duration: Duration) async throws
}

/// The real clock: monotonic, unaffected by wall-clock changes.
public struct ContinuousRetryClock: RetryClock {
    let origin = ContinuousClock.now
    public init() {}
    public var now: Duration { ContinuousClock.now - origin }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// What one payment attempt came to.
public enum AttemptResult<Success: Sendable>: Sendable {
    case success(Success)
    case failure(PaymentFailure)
}

/// The attempts a runner made and how they ended.
public struct RetryOutcome<Success: Sendable>: Sendable {
    /// Why the runner stopped without a success.
    public enum Stop: String, Sendable, Hashable {
        /// The failure is one no retry fixes.
        case notRetryable
        /// The next attempt would have started after the hard stop.
        case hardStop
        /// Every attempt of the schedule was made.
        case attemptsExhausted
        /// The forwarding hint said `do_not_retry`.
        case doNotRetryHint
        /// The task was cancelled while waiting.
        case cancelled
    }

    public struct Attempt: Sendable {
        /// 1-based.
        public var number: Int
        /// Since the first attempt started.
        public var startedAt: Duration
        /// Nil for the attempt that succeeded.
        public var failure: PaymentFailure?
        /// The hint asked for after this attempt failed, if one was asked and answered.
        public var hint: ForwardingHint?
    }

    public var result: Result<Success, PaymentFailure>
    /// Nil on success.
    public var stop: Stop?
    public var attempts: [Attempt]
}

/// Runs a sender's payment attempts on a ``SenderRetryPolicy``: stops at the first success, at a
/// failure that is not retryable, or at the hard stop.
public struct SenderRetryRunner<Clock: RetryClock>: Sendable {
    public var policy: SenderRetryPolicy
    public var clock: Clock

    /// How long `retry_now` waits when the hint names no delay: "retry quickly with small backoff".
    public static var retryNowDefault: Duration { .milliseconds(250) }
    /// How long `retry_later` waits when the hint names no delay (seed 004 §1.7.6).
    public static var retryLaterDefault: Duration { .seconds(5) }

    /// The least wait after the `consecutive`-th `retry_now` in a row (from 0): 250 ms, then
    /// half as long again each time, at most 1 s.
    static func retryNowBackoff(consecutive: Int) -> Duration {
        let milliseconds = 250 * pow(1.5, Double(min(consecutive, 10)))
        return .milliseconds(Int64(min(milliseconds, 1000)))
    }

    public init(policy: SenderRetryPolicy = SenderRetryPolicy(), clock: Clock) {
        self.policy = policy
        self.clock = clock
    }

    /// Attempts on the plain schedule.
    public func run<Success: Sendable>(
        using random: inout some RandomNumberGenerator,
        attempt: () async -> AttemptResult<Success>
    ) async -> RetryOutcome<Success> {
        await run(using: &random, hint: { nil }, attempt: attempt)
    }

    /// Attempts on the schedule, with the system's randomness for the jitter.
    public func run<Success: Sendable>(attempt: () async -> AttemptResult<Success>) async -> RetryOutcome<Success> {
        var random = SystemRandomNumberGenerator()
        return await run(using: &random, hint: { nil }, attempt: attempt)
    }

    /// Attempts that follow the LSP's forwarding hint (seed 004 §1.7.3), asked after each failure:
    /// `do_not_retry` stops, `retry_now` waits `recommended_delay_ms` (or ``retryNowDefault``),
    /// `retry_later` waits `recommended_delay_ms` (or ``retryLaterDefault``) cut short at the hard
    /// stop. When the hint cannot be had, that wait is the plain schedule's.
    public func run<Success: Sendable>(
        using random: inout some RandomNumberGenerator,
        forwardingHint: () async throws -> ForwardingHint,
        attempt: () async -> AttemptResult<Success>
    ) async -> RetryOutcome<Success> {
        // A hint source that fails counts as no hint: the plain schedule's wait.
        await run(using: &random, hint: { try? await forwardingHint() }, attempt: attempt)
    }

    private func run<Success: Sendable>(
        using random: inout some RandomNumberGenerator,
        hint: () async -> ForwardingHint?,
        attempt: () async -> AttemptResult<Success>
    ) async -> RetryOutcome<Success> {
        let start = clock.now
        var attempts: [RetryOutcome<Success>.Attempt] = []
        var number = 1
        var retryNowInARow = 0
        while true {
            let startedAt = clock.now - start
            let failure: PaymentFailure
            switch await attempt() {
            case .success(let value):
                attempts.append(.init(number: number, startedAt: startedAt, failure: nil, hint: nil))
                return RetryOutcome(result: .success(value), stop: nil, attempts: attempts)
            case .failure(let error):
                failure = error
                attempts.append(.init(number: number, startedAt: startedAt, failure: error, hint: nil))
            }
            func stopped(_ stop: RetryOutcome<Success>.Stop) -> RetryOutcome<Success> {
                RetryOutcome(result: .failure(failure), stop: stop, attempts: attempts)
            }
            if failure.retryability == .never { return stopped(.notRetryable) }

            var wait: Duration
            var clampToHardStop = false
            if let answer = await hint() {
                attempts[attempts.count - 1].hint = answer
                // Guided by hints, the hard stop is the limit, not the plain schedule's count: a
                // recipient that is waking needs several short waits, and four attempts spent
                // while its node starts would give up on a payment about to go through (measured
                // with `herald-bench wake`: 21% completed instead of 100%).
                guard number < policy.maxHintedAttempts else { return stopped(.attemptsExhausted) }
                switch answer.hint {
                case .doNotRetry:
                    return stopped(.doNotRetryHint)
                case .retryNow:
                    // A present recipient's node may still be starting: each further retry_now
                    // in a row waits half as long again (up to 1 s), so a slow start costs few attempts.
                    let recommended = answer.recommendedDelayMs.map { Duration.milliseconds(max($0, 0)) } ?? Self.retryNowDefault
                    wait = max(recommended, Self.retryNowBackoff(consecutive: retryNowInARow))
                    retryNowInARow += 1
                    clampToHardStop = true
                case .retryLater:
                    wait = answer.recommendedDelayMs.map { .milliseconds(max($0, 0)) } ?? Self.retryLaterDefault
                    retryNowInARow = 0
                    clampToHardStop = true
                }
            } else {
                guard let scheduled = policy.delay(after: number, using: &random) else { return stopped(.attemptsExhausted) }
                wait = scheduled
            }
            // Measured after the hint answered: the time it took counts against the window.
            let elapsed = clock.now - start
            if elapsed + wait > policy.hardStop {
                guard clampToHardStop, elapsed < policy.hardStop else { return stopped(.hardStop) }
                wait = policy.hardStop - elapsed
            }
            do {
                try await clock.sleep(for: wait)
            } catch {
                return stopped(.cancelled)
            }
            number += 1
        }
    }
}

extension SenderRetryRunner where Clock == ContinuousRetryClock {
    public init(policy: SenderRetryPolicy = SenderRetryPolicy()) {
        self.init(policy: policy, clock: ContinuousRetryClock())
    }
}
