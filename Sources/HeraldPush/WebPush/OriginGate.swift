import NIOConcurrencyHelpers

/// At most `limit` requests in flight to one origin: a small self-hosted distributor (ntfy on a
/// home server) must not get every send of a burst at once. Waiters queue in order and wait
/// without holding a thread; a cancelled waiter leaves the queue at once.
final class OriginGate: Sendable {
    let limit: Int

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct Origin {
        var inFlight = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var origins: [String: Origin] = [:]
        var nextID: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once a place for `origin` is free. Cancelled while waiting, it returns nil
    /// without running `body`.
    func run<T: Sendable>(origin: String, _ body: () async -> T) async -> T? {
        guard await enter(origin) else { return nil }
        defer { leave(origin) }
        return await body()
    }

    private func enter(_ origin: String) async -> Bool {
        let id: UInt64? = state.withLockedValue { state in
            if state.origins[origin, default: Origin()].inFlight < limit {
                state.origins[origin, default: Origin()].inFlight += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let admitted: Bool? = state.withLockedValue { state in
                    // A place may have come free between the two locks.
                    if state.origins[origin, default: Origin()].inFlight < limit {
                        state.origins[origin, default: Origin()].inFlight += 1
                        return true
                    }
                    if Task.isCancelled { return false }
                    state.origins[origin, default: Origin()].waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let admitted { continuation.resume(returning: admitted) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLockedValue { state in
                guard let index = state.origins[origin]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.origins[origin]?.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    private func leave(_ origin: String) {
        let next: Waiter? = state.withLockedValue { state in
            guard var entry = state.origins[origin] else { return nil }
            if entry.waiters.isEmpty {
                entry.inFlight -= 1
                // Forget idle origins: registrations choose them, so the map must not grow.
                state.origins[origin] = entry.inFlight == 0 ? nil : entry
                return nil
            }
            // The place passes straight to the first waiter.
            let waiter = entry.waiters.removeFirst()
            state.origins[origin] = entry
            return waiter
        }
        next?.continuation.resume(returning: true)
    }

    /// Requests in flight to `origin`; for tests.
    func inFlight(_ origin: String) -> Int {
        state.withLockedValue { $0.origins[origin]?.inFlight ?? 0 }
    }
}
