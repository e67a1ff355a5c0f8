import Foundation

/// What a mock server received, in arrival order, with a way for a test to wait for it.
public actor RequestLog<Entry: Sendable> {
    private var entries: [Entry] = []
    private var waiters: [UUID: (count: Int, continuation: CheckedContinuation<[Entry], any Error>)] = [:]

    public init() {}

    /// Everything received so far.
    public var all: [Entry] { entries }

    public var count: Int { entries.count }

    func append(_ entry: Entry) {
        entries.append(entry)
        for (id, waiter) in waiters where entries.count >= waiter.count {
            waiters[id] = nil
            waiter.continuation.resume(returning: entries)
        }
    }

    /// Returns once at least `count` entries have arrived (all of them), without polling.
    ///
    /// - Throws: ``RequestLogTimeout`` after `timeout`.
    public func waitFor(count: Int, timeout: Duration = .seconds(10)) async throws -> [Entry] {
        if entries.count >= count { return entries }
        let id = UUID()
        return try await withThrowingTaskGroup(of: [Entry].self) { group in
            group.addTask { try await self.suspend(id: id, count: count) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw RequestLogTimeout(expected: count, received: await self.count)
            }
            defer { group.cancelAll() }
            guard let entries = try await group.next() else { throw CancellationError() }
            return entries
        }
    }

    private func suspend(id: UUID, count: Int) async throws -> [Entry] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if entries.count >= count {
                    continuation.resume(returning: entries)
                } else {
                    waiters[id] = (count, continuation)
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }
}

/// A mock did not receive the requests a test waited for.
public struct RequestLogTimeout: Error, Sendable, CustomStringConvertible {
    public let expected: Int
    public let received: Int
    public var description: String { "waited for \(expected) requests, received \(received)" }
}
