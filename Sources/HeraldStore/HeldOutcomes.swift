import NIOConcurrencyHelpers
import NIOCore

/// Send outcomes held for a moment, so that the store's next write (a batch of webhooks, a
/// claim) carries them instead of committing them in a transaction of their own.
///
/// Why: one webhook at a time, its outcome was a second commit that rewrote pages the next
/// job's insert writes again; under load every other commit was an outcome batch. Outcomes
/// nobody carries are written alone after ``linger``, as before.
///
/// The price is at-least-once's window: a push whose outcome is held when the process is killed
/// is sent again after the restart. It was the few microseconds of the outcome's own write; it
/// is now the time to the next commit, at most ``linger``.
public final class HeldOutcomes: Sendable {
    /// One `complete(_:now:)` call, waiting for the commit that writes it.
    public struct Held: Sendable {
        public var completions: [JobCompletion]
        public var now: Double
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held: [Held] = []
        var flush: Scheduled<Void>?
    }

    private let state = NIOLockedValueBox(State())
    /// How long an outcome waits for a write to ride on.
    public let linger: Duration
    private let loop: any EventLoop

    /// Nil when `linger` is zero: then nothing waits, and each batch is written at once.
    ///
    /// - Parameter loop: Where the linger's timer runs. A loop's timer taken back before it
    ///   fires costs no thread a wake-up.
    public init?(linger: Duration, loop: any EventLoop) {
        guard linger > .zero else { return nil }
        self.linger = linger
        self.loop = loop
    }

    /// Returns once a write has committed `completions` (or failed with them): the next one
    /// that calls ``take()``, or `writeAlone`, which runs ``linger`` after the first of them was
    /// held and must take and finish whatever is held then.
    public func hold(
        _ completions: [JobCompletion], now: Double, writeAlone: @escaping @Sendable () -> Void
    ) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            state.withLockedValue { state in
                state.held.append(Held(completions: completions, now: now, continuation: continuation))
                guard state.flush == nil else { return }
                state.flush = loop.scheduleTask(in: TimeAmount(linger)) { [weak self] in
                    self?.state.withLockedValue { $0.flush = nil }
                    writeAlone()
                }
            }
        }
    }

    /// How many outcomes are held now, waiting for a write to carry them: how a test knows that
    /// `hold` has an outcome before it looks at the rows.
    public var count: Int {
        state.withLockedValue { state in state.held.reduce(0) { $0 + $1.completions.count } }
    }

    /// Everything held, for the write about to run, which must ``finish(_:_:)`` it.
    public func take() -> [Held] {
        state.withLockedValue { state in
            guard !state.held.isEmpty else { return [] }
            state.flush?.cancel()
            state.flush = nil
            defer { state.held.removeAll() }
            return state.held
        }
    }

    /// Resumes the callers of `taken` with the carrying write's result.
    public static func finish(_ taken: [Held], _ result: Result<Void, any Error>) {
        for held in taken { held.continuation.resume(with: result) }
    }
}
