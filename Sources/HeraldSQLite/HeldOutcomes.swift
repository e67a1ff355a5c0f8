import GRDB
import HeraldStore
import NIOConcurrencyHelpers
import NIOCore

/// Send outcomes held for a moment, so that the writer's next transaction (a batch of webhooks,
/// a claim) carries them instead of committing them in a transaction of their own.
///
/// Why: one webhook at a time, its outcome was a second commit (`BEGIN`, `COMMIT`, two
/// `PRAGMA synchronous` switches, a WAL append) that rewrote pages the next job's insert writes
/// again (the job table's last leaf, `job_due`'s); under load every other transaction was an
/// outcome batch. Outcomes nobody carries are written alone after ``linger``, as before.
///
/// The price is at-least-once's window: a push whose outcome is held when the process is killed
/// is sent again after the restart. It was the few microseconds of the outcome's own write; it
/// is now the time to the next commit, at most ``linger``.
final class HeldOutcomes: Sendable {
    /// One ``SQLiteStore/complete(_:now:)`` call, waiting for the commit that writes it.
    struct Held: Sendable {
        var completions: [JobCompletion]
        var now: Double
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held: [Held] = []
        var flush: Scheduled<Void>?
    }

    private let state = NIOLockedValueBox(State())
    /// How long an outcome waits for a transaction to ride on.
    let linger: TimeAmount
    private let loop: any EventLoop

    init(linger: TimeAmount, loop: any EventLoop) {
        self.linger = linger
        self.loop = loop
    }

    /// Holds `held`; unless a transaction takes it first, `writeAlone` runs on the loop after
    /// ``linger`` to write whatever is held then.
    func hold(_ held: Held, writeAlone: @escaping @Sendable () -> Void) {
        state.withLockedValue { state in
            state.held.append(held)
            guard state.flush == nil else { return }
            state.flush = loop.scheduleTask(in: linger) { [weak self] in
                self?.state.withLockedValue { $0.flush = nil }
                writeAlone()
            }
        }
    }

    /// Everything held, for the transaction about to run, which must finish each one.
    func take() -> [Held] {
        state.withLockedValue { state in
            guard !state.held.isEmpty else { return [] }
            state.flush?.cancel()
            state.flush = nil
            defer { state.held.removeAll() }
            return state.held
        }
    }
}

extension [HeldOutcomes.Held] {
    /// Resumes every caller with the carrying transaction's result.
    func finish(_ result: Result<Void, any Error>) {
        let mapped = result.mapError { error -> any Error in
            (error as? DatabaseError).map { StoreError($0) } ?? error
        }
        for held in self { held.continuation.resume(with: mapped) }
    }
}
