import NIOConcurrencyHelpers

/// Wakes one waiting task early. A signal sent while nobody waits is kept (once), so a wake-up
/// that lands between a task's last look and its wait is never lost.
///
/// For a single waiter at a time (the dispatcher's claim loop).
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())

    func signal() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the first signal (or at once for one kept since the last wait), after
    /// `timeout`, or when the task is cancelled.
    func wait(upTo timeout: Duration, on clock: any Clock<Duration>) async {
        let signalled = state.withLockedValue { state in
            defer { state.pending = false }
            return state.pending
        }
        if signalled { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            group.addTask { try? await clock.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLockedValue { state in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
