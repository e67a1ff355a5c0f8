import Foundation
import HeraldDevice
import HeraldWire

/// Reads a reporter's events as they come and lets a test wait for the one it expects, without
/// polling: each arrival is checked against the waiters.
actor EventRecorder {
    typealias Match = @Sendable (PresenceReporter.Event) -> Bool
    private(set) var events: [PresenceReporter.Event] = []
    private var waiters: [UUID: (match: Match, continuation: CheckedContinuation<PresenceReporter.Event?, Never>)] = [:]

    init(_ reporter: PresenceReporter) {
        let stream = reporter.events
        Task { for await event in stream { await self.append(event) } }
    }

    private func append(_ event: PresenceReporter.Event) {
        events.append(event)
        for (id, waiter) in waiters where waiter.match(event) {
            waiters[id] = nil
            waiter.continuation.resume(returning: event)
        }
    }

    /// The first event from the `after`-th on that matches, or nil after `timeout`.
    func next(after index: Int = 0, within timeout: Duration = .seconds(15), _ match: @escaping Match) async -> PresenceReporter.Event? {
        if let found = events.dropFirst(index).first(where: match) { return found }
        let id = UUID()
        return await withCheckedContinuation { continuation in
            waiters[id] = (match, continuation)
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(id)
            }
        }
    }

    private func expire(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: nil)
    }

    var count: Int { events.count }
}

extension PresenceReporter.Event {
    var isPresent: Bool { self == .present }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var isStopped: Bool { if case .stopped = self { true } else { false } }
    var wakeEvent: PresenceWakeEvent? { if case .wake(let event) = self { event } else { nil } }
}
