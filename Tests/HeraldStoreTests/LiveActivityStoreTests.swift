import Foundation
import HeraldStore
import HeraldWire
import Testing

/// Each swap's Live Activity as the stores keep it, run on every back end.
@Suite("Store: Live Activities")
struct LiveActivityStoreTests {
    static let mempool = LiveActivityStep(status: "transaction.mempool", rank: 2, isFinal: false)
    static let confirmed = LiveActivityStep(status: "transaction.confirmed", rank: 3, isFinal: false)
    static let claimPending = LiveActivityStep(status: "transaction.claim.pending", rank: 4, isFinal: false)
    static let claimed = LiveActivityStep(status: "transaction.claimed", rank: 5, isFinal: true)

    func plan(
        _ store: some LiveActivityStore, _ device: String, _ swap: String, _ step: LiveActivityStep, at seconds: TimeInterval
    ) async throws -> Result<LiveActivityPush, LiveActivitySkipped> {
        try await store.planLiveActivity(deviceID: device, swapID: swap, step: step, now: t0.addingTimeInterval(seconds), minimumInterval: 1)
    }

    @Test(
        "a swap's activity: start on the push-to-start token, updates and the end on its own token, timestamps increasing, stale and late statuses dropped",
        arguments: Backend.allCases)
    func lifecycle(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let device = try await store.registerDevice(platform: .ios, token: "a1a1", now: t0).device.id
            #expect(try await plan(store, device, "s1", Self.mempool, at: 0) == .failure(.init(.noStartToken)))
            #expect(try await plan(store, device, "s1", Self.claimed, at: 0) == .failure(.init(.neverStarted)))

            try await store.setLiveActivityStartToken(deviceID: device, token: "5757", now: t0)
            #expect(try await store.liveActivityStartToken(deviceID: device) == "5757")
            let start = try await plan(store, device, "s1", Self.mempool, at: 0).get()
            #expect(start.event == .start && start.token == "5757" && start.dueAt == nil)
            #expect(start.timestamp == Int64(t0.timeIntervalSince1970))
            // The app has not yet sent the started activity's token: nothing to update.
            #expect(try await plan(store, device, "s1", Self.confirmed, at: 5) == .failure(.init(.noActivityToken)))

            try await store.setLiveActivityToken(deviceID: device, swapID: "s1", token: "ac71", now: t0.addingTimeInterval(6))
            let update = try await plan(store, device, "s1", Self.confirmed, at: 10).get()
            #expect(update.event == .update && update.token == "ac71" && update.dueAt == nil)
            #expect(update.timestamp == start.timestamp + 10)
            #expect(try await plan(store, device, "s1", Self.mempool, at: 11) == .failure(.init(.stale)))
            #expect(try await plan(store, device, "s1", Self.confirmed, at: 11) == .failure(.init(.stale)))
            // Two statuses in one second: the timestamp still moves on, and the second waits its turn.
            let end = try await plan(store, device, "s1", Self.claimed, at: 10.2).get()
            #expect(end.event == .end && end.timestamp == update.timestamp + 1)
            #expect(end.dueAt == t0.addingTimeInterval(11))
            #expect(try await plan(store, device, "s1", Self.claimPending, at: 12) == .failure(.init(.ended)))

            // Another swap on the same phone keeps apart.
            let other = try await plan(store, device, "s2", Self.mempool, at: 12).get()
            #expect(other.event == .start && other.timestamp == start.timestamp + 12)

            #expect(try await store.deleteLiveActivity(deviceID: device, swapID: "s1"))
            #expect(try await !store.deleteLiveActivity(deviceID: device, swapID: "s1"))
            // Deleting the device takes its tokens and activities with it.
            try await store.deleteDevice(id: device, now: t0.addingTimeInterval(13))
            #expect(try await store.liveActivityStartToken(deviceID: device) == nil)
            #expect(try await !store.deleteLiveActivity(deviceID: device, swapID: "s2"))
        }
    }

    @Test("an update waiting for its slot is replaced by the next status: its job is deleted unsent", arguments: Backend.allCases)
    func coalescing(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let device = try await store.registerDevice(platform: .ios, token: "b2b2", now: t0).device.id
            try await store.setLiveActivityToken(deviceID: device, swapID: "s", token: "ac72", now: t0)
            let first = try await plan(store, device, "s", Self.mempool, at: 0).get()
            #expect(first.event == .update && first.dueAt == nil)
            let second = try await plan(store, device, "s", Self.confirmed, at: 0.3).get()
            #expect(second.dueAt == t0.addingTimeInterval(1))
            var waiting = job("ac72")
            waiting.id = second.jobID
            waiting.dueAt = second.dueAt
            _ = try await store.enqueue([waiting], now: t0.addingTimeInterval(0.3), leaseUntil: t0.addingTimeInterval(5), leasing: 0)
            #expect(try await store.status(jobID: second.jobID)?.state == .pending)
            let third = try await plan(store, device, "s", Self.claimPending, at: 0.6).get()
            #expect(third.dueAt == t0.addingTimeInterval(1) && third.timestamp == second.timestamp + 1)
            #expect(try await store.status(jobID: second.jobID) == nil)
        }
    }

    @Test(
        "forty statuses at once for one swap: one start, then each later status at most once, timestamps never repeated", arguments: Backend.allCases)
    func concurrentStatuses(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let device = try await store.registerDevice(platform: .ios, token: "c3c3", now: t0).device.id
            try await store.setLiveActivityStartToken(deviceID: device, token: "5757", now: t0)
            let first = try await withThrowingTaskGroup(of: Result<LiveActivityPush, LiveActivitySkipped>.self) { group in
                for _ in 0..<40 { group.addTask { try await plan(store, device, "s", Self.mempool, at: 0) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(first.filter { (try? $0.get())?.event == .start }.count == 1)
            #expect(first.filter { $0 == .failure(.init(.stale)) }.count == 39)

            try await store.setLiveActivityToken(deviceID: device, swapID: "s", token: "ac73", now: t0)
            let later = try await withThrowingTaskGroup(of: Result<LiveActivityPush, LiveActivitySkipped>.self) { group in
                for rank in 3..<43 {
                    let step = LiveActivityStep(status: "status-\(rank)", rank: rank, isFinal: false)
                    group.addTask { try await plan(store, device, "s", step, at: 5) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let sent = later.compactMap { try? $0.get() }
            #expect(!sent.isEmpty)
            #expect(Set(sent.map(\.timestamp)).count == sent.count)
            #expect(Set(sent.map(\.jobID)).count == sent.count)
            #expect(later.allSatisfy { (try? $0.get()) != nil || $0 == .failure(.init(.stale)) })
        }
    }
}
