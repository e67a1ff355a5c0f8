import Foundation

/// Runs work against a deadline and hands back a value by then, whatever the work does.
enum DeadlineRace {
    /// The work's value, or `fallback()` if the deadline (or the caller's cancellation) comes first.
    ///
    /// The work runs in a task of its own that this function does not wait for: a wallet call
    /// that ignores cancellation (a blocking FFI call into an SDK) must not keep the content from
    /// the system. The race itself is a task group of two cooperative children.
    static func run<T: Sendable>(
        until deadline: Deadline,
        work: @escaping @Sendable () async -> T,
        afterwards: @escaping @Sendable () async -> Void = {},
        fallback: @Sendable () -> T
    ) async -> (value: T, timedOut: Bool) {
        let box = FirstValue<T>()
        let worker = Task {
            box.offer(await work())
            await afterwards()
        }
        let clock = deadline.clock
        let won: T? = await withTaskGroup(of: T?.self) { group in
            group.addTask { await box.wait() }
            group.addTask {
                try? await clock.sleep(deadline.remaining)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let won { return (won, false) }
        worker.cancel()
        return (fallback(), true)
    }
}

/// A value set once and awaited once, with the waiter released on cancellation.
final class FirstValue<T: Sendable>: @unchecked Sendable {
    // Guarded by `lock`; a class with a lock because the waiter and the offering task race.
    private let lock = NSLock()
    private var value: T?
    private var waiter: CheckedContinuation<T?, Never>?
    private var cancelled = false

    func offer(_ newValue: T) {
        lock.lock()
        guard value == nil else {
            lock.unlock()
            return
        }
        value = newValue
        let waiting = waiter
        waiter = nil
        lock.unlock()
        waiting?.resume(returning: newValue)
    }

    func wait() async -> T? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                lock.lock()
                if let value {
                    lock.unlock()
                    continuation.resume(returning: value)
                } else if cancelled {
                    lock.unlock()
                    continuation.resume(returning: nil)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            cancelled = true
            let waiting = waiter
            waiter = nil
            lock.unlock()
            waiting?.resume(returning: nil)
        }
    }
}
