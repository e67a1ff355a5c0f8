import Foundation
import NIOConcurrencyHelpers

/// What the dispatcher holds in memory, bounded, and what it knows of due jobs left in the store.
///
/// A job counts from the moment intake hands it over (or a claim takes it) until its outcome is
/// written or it is given back, so the buffer of jobs to send, the sends in flight and the
/// outcomes waiting to be written together never exceed ``bound``. What does not fit waits in
/// the store, unleased, and is claimed as room frees.
///
/// The store holds a *backlog* when some job there is due now and not in memory. While it
/// does, intake hands nothing over directly (its jobs go to the store behind the backlog, so
/// order is kept and due retries are not starved by new webhooks) and the claim loop is woken
/// whenever enough room frees.
final class DispatcherMemory: Sendable {
    private struct State {
        var held = 0
        var peak = 0
        /// True at start: jobs left by an earlier run may be due.
        var backlog = true
        /// Bumped by every ``noteBacklog()``, so a claim that began before it cannot clear it.
        var backlogVersion = 0
        /// The earliest moment a job in the store becomes due, as far as is known.
        var nextDue: Date?
        var closed = false
    }

    /// Jobs in memory at most.
    let bound: Int
    /// The least room worth a claim: a claim is one write transaction, so not one per freed slot.
    let claimBatch: Int
    let wake = WakeSignal()
    private let metrics: HeraldMetrics
    private let state = NIOLockedValueBox(State())

    init(bound: Int, maxConcurrentSends: Int, metrics: HeraldMetrics) {
        self.bound = max(bound, 1)
        claimBatch = max(1, min(maxConcurrentSends, self.bound / 2))
        self.metrics = metrics
    }

    var held: Int { state.withLockedValue { $0.held } }
    /// The most jobs ever held at once.
    var peak: Int { state.withLockedValue { $0.peak } }
    var nextDue: Date? { state.withLockedValue { $0.nextDue } }

    /// Room for up to `count` jobs straight from intake: none while the store holds a backlog
    /// or once closed.
    func reserveForIntake(upTo count: Int) -> Int {
        state.withLockedValue { state in
            guard !state.closed, !state.backlog else { return 0 }
            let room = min(count, bound - state.held)
            take(room, &state, holdsJobs: true)
            return room
        }
    }

    /// Room for a claim when the store holds a backlog and at least ``claimBatch`` is free;
    /// zero otherwise. `version` goes to ``drained(since:)``.
    func reserveForClaim() -> (room: Int, version: Int) {
        state.withLockedValue { state in
            let free = bound - state.held
            guard !state.closed, state.backlog, free >= claimBatch else { return (0, state.backlogVersion) }
            // Room, not jobs: the claim gives back what it does not fill (``forget(_:)``).
            take(free, &state, holdsJobs: false)
            return (free, state.backlogVersion)
        }
    }

    /// - Parameter holdsJobs: Whether jobs fill the room now (intake's), so the peak counts it;
    ///   a claim's room is counted once the claim has given back what it did not fill.
    private func take(_ count: Int, _ state: inout State, holdsJobs: Bool) {
        guard count > 0 else { return }
        state.held += count
        if holdsJobs { notePeak(&state) }
        metrics.jobsInMemory.set(Int64(state.held))
    }

    private func notePeak(_ state: inout State) {
        guard state.held > state.peak else { return }
        state.peak = state.held
        metrics.jobsInMemoryPeak.set(Int64(state.peak))
    }

    /// A claim's room is now filled by the jobs it found (after giving back the rest).
    func claimed() {
        state.withLockedValue { notePeak(&$0) }
    }

    /// Jobs that left memory (outcome written, given back, room reserved and not used). Wakes
    /// the claim loop when that makes room for a claim the backlog needs.
    func forget(_ count: Int) {
        guard count > 0 else { return }
        let wake = state.withLockedValue { state in
            state.held -= count
            metrics.jobsInMemory.set(Int64(state.held))
            return state.backlog && bound - state.held >= claimBatch
        }
        if wake { self.wake.signal() }
    }

    /// Due jobs were left in the store (intake had no room, a lease was given up).
    func noteBacklog() {
        state.withLockedValue { state in
            state.backlog = true
            state.backlogVersion &+= 1
        }
        wake.signal()
    }

    /// A claim that began at `version` came back short: every due job is in memory now, unless
    /// a backlog was noted meanwhile.
    func drained(since version: Int) {
        state.withLockedValue { state in
            if state.backlogVersion == version { state.backlog = false }
        }
    }

    /// A job becomes due at `date` (a retry, or what the store says comes next): kept if earlier
    /// than what is known, and the claim loop is woken to sleep until then instead.
    func noteDue(at date: Date?) {
        guard let date else { return }
        let earlier = state.withLockedValue { state in
            guard state.nextDue.map({ date < $0 }) ?? true else { return false }
            state.nextDue = date
            return true
        }
        if earlier { wake.signal() }
    }

    /// Turns a due time that has come into a backlog; returns whether it did.
    @discardableResult
    func takeDue(now: Date) -> Bool {
        state.withLockedValue { state in
            guard let due = state.nextDue, due <= now else { return false }
            state.nextDue = nil
            state.backlog = true
            return true
        }
    }

    /// No more hand-overs or claims: shutting down.
    func close() {
        state.withLockedValue { $0.closed = true }
    }
}
