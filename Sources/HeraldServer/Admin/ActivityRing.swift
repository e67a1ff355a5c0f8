import Foundation
import NIOConcurrencyHelpers

/// Webhooks and pushes per 10-second slot over the last minutes, and send outcomes by provider
/// since start: the dashboard's chart and shares. In memory only: a restart starts it afresh,
/// and the Prometheus counters remain the record.
///
/// One short lock per webhook and per push; reading copies the slots out.
public final class ActivityRing: Sendable {
    /// Seconds per slot.
    public static let slotSeconds = 10
    /// Slots kept: six minutes.
    public static let slotCount = 36

    struct Slot: Sendable {
        var index = Int.min
        var webhooks = 0
        var pushes = 0
    }

    private struct State: Sendable {
        var slots = [Slot](repeating: Slot(), count: ActivityRing.slotCount)
        var outcomes: [String: [String: Int]] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    private static func index(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 / Double(slotSeconds)).rounded(.down))
    }

    /// Runs `update` on the current slot (emptied first when it last held an older one).
    private func withCurrentSlot(_ update: (inout Slot, inout State) -> Void) {
        let index = Self.index(now())
        state.withLockedValue { state in
            let position = Self.position(index)
            if state.slots[position].index != index { state.slots[position] = Slot(index: index) }
            var slot = state.slots[position]
            update(&slot, &state)
            state.slots[position] = slot
        }
    }

    private static func position(_ index: Int) -> Int { ((index % slotCount) + slotCount) % slotCount }

    /// A webhook (or backend event) accepted.
    public func webhookReceived() {
        withCurrentSlot { slot, _ in slot.webhooks += 1 }
    }

    /// A send answered by `provider` with `outcome`.
    public func pushSent(provider: String, outcome: String) {
        withCurrentSlot { slot, state in
            slot.pushes += 1
            state.outcomes[provider, default: [:]][outcome, default: 0] += 1
        }
    }

    /// One slot's counts, oldest first in ``Snapshot/slots``.
    public struct Point: Sendable, Hashable {
        public var start: Date
        public var webhooks: Int
        public var pushes: Int
    }

    public struct Snapshot: Sendable {
        /// The last ``slotCount`` slots, oldest first; the last one is still filling.
        public var slots: [Point]
        /// Send outcomes by provider, then by outcome, since start.
        public var outcomes: [String: [String: Int]]

        /// Per second over the last complete slot (the filling one would read low).
        public var webhooksPerSecond: Double { rate(\.webhooks) }
        public var pushesPerSecond: Double { rate(\.pushes) }

        private func rate(_ field: KeyPath<Point, Int>) -> Double {
            guard slots.count >= 2 else { return 0 }
            return Double(slots[slots.count - 2][keyPath: field]) / Double(ActivityRing.slotSeconds)
        }
    }

    public func snapshot() -> Snapshot {
        let current = Self.index(now())
        return state.withLockedValue { state in
            let points = (current - Self.slotCount + 1...current).map { index -> Point in
                let slot = state.slots[Self.position(index)]
                let start = Date(timeIntervalSince1970: Double(index * Self.slotSeconds))
                guard slot.index == index else { return Point(start: start, webhooks: 0, pushes: 0) }
                return Point(start: start, webhooks: slot.webhooks, pushes: slot.pushes)
            }
            return Snapshot(slots: points, outcomes: state.outcomes)
        }
    }
}
