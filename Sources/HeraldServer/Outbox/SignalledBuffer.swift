import NIOConcurrencyHelpers

/// A buffer that many tasks append to and one task drains in batches: the shape of group commit.
///
/// Appending wakes the drainer; the drainer takes everything buffered at once (up to a limit),
/// so under load one transaction carries many items and when idle an item goes alone at once.
final class SignalledBuffer<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var closed = false
    }

    private let state = NIOLockedValueBox(State())
    private let signal: AsyncStream<Void>
    private let signalContinuation: AsyncStream<Void>.Continuation

    init() {
        (signal, signalContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Appends, or returns false when the buffer is closed.
    @discardableResult
    func append(_ element: Element) -> Bool {
        let accepted = state.withLockedValue { state in
            guard !state.closed else { return false }
            state.items.append(element)
            return true
        }
        if accepted { signalContinuation.yield() }
        return accepted
    }

    @discardableResult
    func append(contentsOf elements: [Element]) -> Bool {
        let accepted = state.withLockedValue { state in
            guard !state.closed else { return false }
            state.items.append(contentsOf: elements)
            return true
        }
        if accepted { signalContinuation.yield() }
        return accepted
    }

    var count: Int { state.withLockedValue { $0.items.count } }

    /// Takes up to `limit` buffered items, oldest first.
    func take(limit: Int) -> [Element] {
        state.withLockedValue { state in
            if state.items.count <= limit {
                defer { state.items.removeAll(keepingCapacity: true) }
                return state.items
            }
            let batch = Array(state.items.prefix(limit))
            state.items.removeFirst(limit)
            return batch
        }
    }

    /// Refuses further appends and ends `batches` once the rest is drained.
    func close() {
        state.withLockedValue { $0.closed = true }
        signalContinuation.finish()
    }

    /// Hands batches to `body` as they come, until the buffer is closed and empty.
    func drain(limit: Int, _ body: ([Element]) async -> Void) async {
        for await _ in signal {
            await drainNow(limit: limit, body)
        }
        await drainNow(limit: limit, body)
    }

    private func drainNow(limit: Int, _ body: ([Element]) async -> Void) async {
        while true {
            let batch = take(limit: limit)
            if batch.isEmpty { return }
            await body(batch)
        }
    }
}
