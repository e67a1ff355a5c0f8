import NIOConcurrencyHelpers

/// Pushes the push service answered whose outcome is not yet committed. Each is a push that
/// `kill -9` would have sent twice (another process sends the job again once its lease runs
/// out), so they are bounded in time: once the oldest has waited ``maxAge`` for its commit, the
/// send loop starts nothing new until commits catch up. A store slowed by a busy machine then
/// slows sending, instead of letting answered-but-unrecorded outcomes pile up behind it (the
/// duplicates after a crash reached 3–16% of a burst on a contended host). Under full load with
/// a healthy store the oldest outcome is a commit or two old, far below the bound, and nothing waits.
final class OutcomeGate: Sendable {
    private struct State {
        /// When each awaiting outcome was answered, oldest first: outcomes are committed in the
        /// order they were answered (one FIFO buffer, drained from its head).
        var answeredAt: [ContinuousClock.Instant] = []
        var head = 0
        var peak = 0
        var waiters: [CheckedContinuation<Void, Never>] = []

        var awaiting: Int { answeredAt.count - head }
    }

    /// How long the oldest outcome may await its commit before sends pause.
    let maxAge: Duration
    /// Outcomes that may await whatever their age (a commit carries many at once).
    let floor: Int
    private let metrics: HeraldMetrics
    private let state = NIOLockedValueBox(State())

    init(maxAge: Duration, floor: Int = 16, metrics: HeraldMetrics) {
        self.maxAge = maxAge
        self.floor = max(1, floor)
        self.metrics = metrics
    }

    /// Outcomes answered and not yet committed.
    var awaiting: Int { state.withLockedValue { $0.awaiting } }
    /// The most there have been at once.
    var peak: Int { state.withLockedValue { $0.peak } }

    private func isOpen(_ state: State, now: ContinuousClock.Instant) -> Bool {
        state.awaiting < floor || now - state.answeredAt[state.head] < maxAge
    }

    /// Returns once the oldest awaiting outcome is younger than ``maxAge`` (or few await).
    func waitForRoom() async {
        while !state.withLockedValue({ isOpen($0, now: .now) }) {
            // Until the next commit, then look again.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = state.withLockedValue { state in
                    if isOpen(state, now: .now) { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if open { continuation.resume() }
            }
        }
    }

    /// A push was answered: its outcome now waits for a commit.
    func answered() {
        let now = ContinuousClock.now
        state.withLockedValue { state in
            state.answeredAt.append(now)
            if state.awaiting > state.peak {
                state.peak = state.awaiting
                metrics.outcomesAwaitingCommitPeak.set(Int64(state.peak))
            }
        }
    }

    /// The `count` oldest outcomes were committed (or given up on: their jobs are sent again
    /// after the lease). Paused sends look again.
    func committed(_ count: Int) {
        let resumed = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.head = min(state.answeredAt.count, state.head + count)
            if state.head == state.answeredAt.count {
                state.answeredAt.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head > 1024 && state.head * 2 > state.answeredAt.count {
                state.answeredAt.removeFirst(state.head)
                state.head = 0
            }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in resumed { waiter.resume() }
    }
}
