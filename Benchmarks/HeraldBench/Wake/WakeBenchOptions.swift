import Foundation
import HeraldWire

/// The fleet model of `herald-bench wake`, every parameter a flag. Times are seconds.
struct WakeBenchOptions {
    /// Payments per strategy, all run at once.
    var payments = 200
    var seed: UInt64 = 1
    /// Payments start spread uniformly over this many seconds, not in one instant.
    var spread = 3.0
    /// No attempt starts this long after the first (SenderRetryPolicy allows 10–15 s).
    var hardStop = 15.0
    /// Silent pushes iOS never delivers (throttling, low power, "the OS doesn't feel like it").
    var silentDrop = 0.7
    /// Push delivery delay, silent and alert alike.
    var pushDelay = 0.2...2.0
    /// A background-woken app starts its node and can take the payment after this.
    var backgroundComplete = 2.0...6.0
    /// The user opens the app this long after the alert shows: log-normal.
    var openMedian = 5.0
    var openSigma = 0.3
    /// Users who do not open the app at all.
    var neverOpen = 0.005
    /// An opened app can take the payment after this (node start, peer connection).
    var openComplete = 1.0...3.0
    /// The sender's waits after each failed attempt (`SenderRetryPolicy.delays`); one more attempt
    /// than waits, with hints too.
    var retryDelays: [Double] = SenderRetryPolicy.defaultDelays.map { Double($0.components.seconds) }

    /// The sender's policy: the waits, 0.5 s of jitter, the hard stop (clamped to 10–15 s).
    var retryPolicy: SenderRetryPolicy {
        SenderRetryPolicy(delays: retryDelays.map { .milliseconds(Int64($0 * 1000)) }, hardStop: .milliseconds(Int64(hardStop * 1000)))
    }
    var strategies: [WakeStrategy] = WakeStrategy.standard
    /// Phones out of reach when the wake comes (a lift, a tunnel, a weak cell): APNs holds one
    /// push for them, by Apple's rules (`APNsOfflineSlot`), until they are back.
    var offline = 0.1
    /// How long such a phone stays out of reach after the first push reaches APNs: uniform.
    var offlineFor = 1.0...5.0
    /// APNs may reorder pushes to one token: the chance that a wake's two pushes swap places.
    var reorder = 0.1
    /// Whether a silently woken app acks `received` at once, so a fallback alert waits longer.
    var acksReceived = true
    /// Which push rules to simulate, each a run of its own with the same seed.
    var rules: [WakePushRules] = WakePushRules.allCases
    /// The `herald` binary; by default the one built beside this one.
    var herald: String?

    static let usage = """
        usage: herald-bench wake [options]       a fleet of simulated phones against `herald serve`
          --payments N            payments per strategy, run concurrently (200)
          --seed N                seed of every random draw (1)
          --spread S              payments start spread over S seconds (3)
          --hard-stop S           no attempt S seconds after the first, 10 to 15 (15)
          --silent-drop P         fraction of silent pushes iOS drops (0.7)
          --push-delay A-B        push delivery delay, uniform (0.2-2)
          --background-complete A-B  silent push delivered → app can take the payment, uniform (2-6)
          --open-median S         alert shown → user opens the app, log-normal median (5)
          --open-sigma X          σ of that log-normal (0.3)
          --never-open P          fraction of users who do not open the app at all (0.005)
          --open-complete A-B     app opened → it can take the payment, uniform (1-3)
          --retry-delays LIST     the sender's waits after failed attempts, seconds (1,3,7; 1x14 is
                                  fourteen 1 s waits): one more attempt than waits, with hints too
                                  (SenderRetryPolicy)
          --strategies LIST       comma-separated: \(WakeStrategy.standard.map(\.name).joined(separator: ",")),
                                  fallback-N for any N from 1 to 60 (the alert after N s unless handled)
          --fallback-after LIST   adds fallback-N for each N: 1,2,4 or 1-8
          --offline P             fraction of phones out of reach when the wake comes; APNs holds one
                                  push for each, as Apple documents (0.1)
          --offline-for A-B       how long they stay out of reach, uniform (1-5)
          --reorder P             chance that APNs swaps a wake's two pushes (0.1)
          --no-received-ack       a silently woken app acks only `handled`, never `received`
          --rules LIST            push rules, each run in turn with the same seed: today (both pushes
                                  stored and collapsed, sent in no set order) and/or apple (the silent
                                  push never stored, written first) (today,apple)
          --herald PATH           the herald binary (default: beside herald-bench)
        """

    struct Invalid: Error, CustomStringConvertible { var description: String }

    init(arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            if flag == "--no-received-ack" {
                acksReceived = false
                continue
            }
            guard let value = iterator.next() else { throw Invalid(description: "\(flag) needs a value") }
            func number() throws -> Double {
                guard let n = Double(value), n >= 0 else { throw Invalid(description: "\(flag): '\(value)' is not a number ≥ 0") }
                return n
            }
            func fraction() throws -> Double {
                let n = try number()
                guard n <= 1 else { throw Invalid(description: "\(flag): '\(value)' is not between 0 and 1") }
                return n
            }
            func range() throws -> ClosedRange<Double> {
                let parts = value.split(separator: "-").compactMap { Double($0) }
                guard parts.count == 2, parts[0] >= 0, parts[0] <= parts[1] else {
                    throw Invalid(description: "\(flag): '\(value)' is not a range like 1-3")
                }
                return parts[0]...parts[1]
            }
            switch flag {
            case "--payments": payments = max(1, Int(try number()))
            case "--seed":
                guard let n = UInt64(value) else { throw Invalid(description: "--seed: '\(value)' is not a whole number") }
                seed = n
            case "--spread": spread = try number()
            case "--silent-drop": silentDrop = try fraction()
            case "--push-delay": pushDelay = try range()
            case "--background-complete": backgroundComplete = try range()
            case "--open-median": openMedian = try number()
            case "--open-sigma": openSigma = try number()
            case "--never-open": neverOpen = try fraction()
            case "--open-complete": openComplete = try range()
            case "--retry-delays":
                // `1,3,7`, or with repeats `1x14` (fourteen waits of 1 s).
                retryDelays = try value.split(separator: ",").flatMap { item -> [Double] in
                    let parts = item.split(separator: "x")
                    guard let n = parts.first.flatMap({ Double($0) }), n >= 0, parts.count <= 2,
                        let times = parts.count == 2 ? Int(parts[1]) : 1, (1...100).contains(times)
                    else { throw Invalid(description: "--retry-delays: '\(value)' is not a list like 1,3,7 or 1x14") }
                    return Array(repeating: n, count: times)
                }
            case "--hard-stop":
                let n = try number()
                guard (10...15).contains(n) else { throw Invalid(description: "--hard-stop: SenderRetryPolicy allows 10 to 15 s") }
                hardStop = n
            case "--strategies":
                strategies = try value.split(separator: ",").map {
                    guard let strategy = WakeStrategy(name: String($0)) else { throw Invalid(description: "unknown strategy '\($0)'") }
                    return strategy
                }
            case "--fallback-after":
                // `1,2,4`, or a whole range `1-8`.
                let seconds: [Int]
                if let bounds = Optional(value.split(separator: "-").compactMap { Int($0) }), bounds.count == 2, bounds[0] <= bounds[1] {
                    seconds = Array(bounds[0]...bounds[1])
                } else {
                    seconds = value.split(separator: ",").compactMap { Int($0) }
                }
                guard !seconds.isEmpty, seconds.allSatisfy({ (1...60).contains($0) }) else {
                    throw Invalid(description: "--fallback-after: '\(value)' is not a list like 1,2,4 or 1-8 (1 to 60 s)")
                }
                for n in seconds where !strategies.contains(.fallback(seconds: n)) { strategies.append(.fallback(seconds: n)) }
            case "--offline": offline = try fraction()
            case "--offline-for": offlineFor = try range()
            case "--reorder": reorder = try fraction()
            case "--rules":
                rules = try value.split(separator: ",").map {
                    guard let rule = WakePushRules(rawValue: String($0)) else { throw Invalid(description: "unknown rules '\($0)'") }
                    return rule
                }
            case "--herald": herald = value
            default: throw Invalid(description: "unknown option \(flag)")
            }
        }
    }

    /// `1, 3, 7`, with runs folded: `1 x 14`.
    static func describe(_ delays: [Double]) -> String {
        var runs: [(Double, Int)] = []
        for delay in delays {
            if let last = runs.last, last.0 == delay { runs[runs.count - 1].1 += 1 } else { runs.append((delay, 1)) }
        }
        return runs.map { $0.1 > 1 ? "\(fmt($0.0)) x \($0.1)" : fmt($0.0) }.joined(separator: ", ")
    }

    /// One line with every parameter, printed above the table so it can be reproduced.
    var summary: String {
        func r(_ range: ClosedRange<Double>) -> String { "\(fmt(range.lowerBound))–\(fmt(range.upperBound)) s" }
        return """
            seed \(seed), \(payments) payments per strategy started over \(fmt(spread)) s, hard stop \(fmt(hardStop)) s, \
            retry waits \(Self.describe(retryDelays)) s; \
            silent pushes dropped \(fmt(silentDrop * 100))%, push delay \(r(pushDelay)), background wake → payable \(r(backgroundComplete)); \
            alert → open log-normal median \(fmt(openMedian)) s σ \(fmt(openSigma)), never opened \(fmt(neverOpen * 100))%, open → payable \(r(openComplete)); \
            out of reach \(fmt(offline * 100))% for \(r(offlineFor)), pushes reordered \(fmt(reorder * 100))%\
            \(acksReceived ? "" : "; no received acks")
            """
    }
}

func fmt(_ value: Double) -> String {
    value == value.rounded()
        ? String(Int(value)) : String(format: "%.2f", value).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
}

/// Which pushes reach the app, and whether the sender reads Herald's forwarding hints.
enum WakeStrategy: Hashable, Sendable {
    case silentOnly
    case alertOnly
    case twoPush
    case twoPushHints
    /// `wake_alert: fallback`: the silent push, and the alert only if the phone has not acked
    /// `handled` after this many seconds (with hints).
    case fallback(seconds: Int)

    /// The strategies a run compares unless told otherwise.
    static let standard: [WakeStrategy] = [.silentOnly, .alertOnly, .twoPush, .twoPushHints, .fallback(seconds: 4)]

    /// The name on the command line: `fallback-3` for a fallback after 3 s.
    var name: String {
        switch self {
        case .silentOnly: return "silent-only"
        case .alertOnly: return "alert-only"
        case .twoPush: return "two-push"
        case .twoPushHints: return "two-push+hints"
        case .fallback(let seconds): return "fallback-\(seconds)"
        }
    }

    init?(name: String) {
        if name.hasPrefix("fallback-"), let seconds = Int(name.dropFirst("fallback-".count)), (1...60).contains(seconds) {
            self = .fallback(seconds: seconds)
            return
        }
        guard let known = Self.standard.first(where: { $0.name == name }) else { return nil }
        self = known
    }

    /// Herald sends both pushes on iOS for every strategy but `fallback`; the single-push
    /// strategies are simulated by the phone ignoring the other kind.
    var usesSilent: Bool { self != .alertOnly }
    var usesAlert: Bool { self != .silentOnly }
    /// Without hints the sender follows the policy's schedule alone (at once, 1 s, 3 s, 7 s + jitter).
    var usesHints: Bool { self != .twoPush }
    /// What the LSP asks of Herald's wake.
    var wakeAlert: WakeAlert {
        if case .fallback = self { return .fallback }
        return .always
    }
    var fallbackAfter: Int? {
        if case .fallback(let seconds) = self { return seconds }
        return nil
    }

    var label: String {
        switch self {
        case .silentOnly: return "silent only (hints)"
        case .alertOnly: return "alert only (hints)"
        case .twoPush: return "two-push, fixed retries"
        case .twoPushHints: return "two-push + hints"
        case .fallback(let seconds): return "silent, alert after \(seconds) s unless handled (hints)"
        }
    }
}

/// The iOS push rules a run simulates. Herald sends by `apple`; `today` is what it sent before
/// (issue 24), replayed by the simulated phones from the same pushes: both pushes stored by APNs
/// for an offline phone (one expiry, one collapse id) and reaching APNs in no set order.
enum WakePushRules: String, CaseIterable, Sendable {
    case today
    case apple

    var label: String {
        switch self {
        case .today: return "before: both pushes stored, no set order"
        case .apple: return "Apple's rules: silent push never stored, written first"
        }
    }
}
