import Foundation
import HeraldStore
import HeraldWire
import Testing

/// The wake ledger on every back end: gateway devices, wakes, acks and the fallback's job.
@Suite("Wake ledger in the store")
struct WakeLedgerStoreTests {
    let alice = "ln:02" + String(repeating: "a1", count: 32)

    func gateway(install: String, secret: String, ts: Int64, topics: [String] = ["blocktank.*"]) -> WakeGatewayDevice {
        WakeGatewayDevice(
            installKey: "bitkit|" + install, secretSHA256: secret, encryptionKey: "02" + String(repeating: "ee", count: 32), envelope: 1,
            environment: "production", topics: topics, registeredTS: ts)
    }

    @Test("a gateway device is written with its device and identities; the install's newer registration replaces it", arguments: Backend.allCases)
    func registration(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = try await store.registerDevice(
                platform: .ios, token: String(repeating: "ab", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(install: "install-one-aaaaaa", secret: "s1", ts: 100)), now: t0)
            let found = try #require(try await store.wakeGatewayDevice(secretSHA256: "s1"))
            #expect(found.device.id == first.device.id)
            #expect(found.gateway.topics == ["blocktank.*"])
            #expect(found.gateway.registeredTS == 100)
            #expect(try await store.wakeGatewayDevices(identity: alice).map(\.device.id) == [first.device.id])

            // Another install of the same person stays beside it.
            let other = try await store.registerDevice(
                platform: .android, token: "fcm-other", sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(install: "install-two-aaaaaa", secret: "s2", ts: 100)), now: t0)
            #expect(try await store.wakeGatewayDevices(identity: alice).count == 2)

            // The same install again, with the same secret: the earlier device is gone, whole.
            let second = try await store.registerDevice(
                platform: .ios, token: String(repeating: "cd", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(install: "install-one-aaaaaa", secret: "s1", ts: 200)), now: t0)
            #expect(try await store.wakeGatewayDevice(secretSHA256: "s1")?.device.id == second.device.id)
            #expect(try await store.wakeGatewayDevice(installKey: "bitkit|install-one-aaaaaa")?.gateway.registeredTS == 200)
            #expect(Set(try await store.wakeGatewayDevices(identity: alice).map(\.device.id)) == [second.device.id, other.device.id])
            #expect(try await store.identities(deviceID: first.device.id).isEmpty)

            try await store.setWakeGatewayTopics(deviceID: second.device.id, topics: ["paykit.sync", "blocktank.*"], now: t0)
            #expect(try await store.wakeGatewayDevice(secretSHA256: "s1")?.gateway.topics == ["paykit.sync", "blocktank.*"])
            try await store.setWakeGatewayTopics(deviceID: second.device.id, topics: [], now: t0)
            #expect(try await store.wakeGatewayDevice(secretSHA256: "s1")?.gateway.topics == [])

            // Unregistering revokes the secret.
            try await store.deleteDevice(id: second.device.id, now: t0)
            #expect(try await store.wakeGatewayDevice(secretSHA256: "s1") == nil)
        }
    }

    @Test(
        "an install is replaced only by a registration proving one of its identities or presenting its secret; its wakes and pending fallbacks pass to the new device; deleting a device cancels its pending fallbacks",
        arguments: Backend.allCases)
    func installOwnership(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let mallory = "ln:03" + String(repeating: "b2", count: 32)
            let first = try await store.registerDevice(
                platform: .ios, token: String(repeating: "ab", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(install: "install-own-aaaaaa", secret: "s1", ts: 100)), now: t0)
            // A stranger who knows the install id, with a later ts: refused, nothing written.
            await #expect(throws: WakeGatewayInstallTaken.self) {
                try await store.registerDevice(
                    platform: .ios, token: String(repeating: "ef", count: 32), sealKey: nil, app: Device.defaultApp,
                    extras: DeviceExtras(identities: [mallory], wakeGateway: gateway(install: "install-own-aaaaaa", secret: "m1", ts: 700)),
                    now: t0)
            }
            #expect(try await store.wakeGatewayDevice(installKey: "bitkit|install-own-aaaaaa")?.device.id == first.device.id)
            #expect(try await store.wakeGatewayDevices(identity: mallory).isEmpty)

            // A pending wake with its fallback, then the owner registers again on a new token.
            var fallback = NewJob(
                destination: .device(.ios), token: String(repeating: "ab", count: 32), notificationType: "wake_fallback", payload: Data("{}".utf8),
                idempotencyKey: nil, expiresAt: t0.addingTimeInterval(60), app: Device.defaultApp)
            fallback.dueAt = t0.addingTimeInterval(15)
            _ = try await store.enqueue([fallback], now: t0, leaseUntil: t0.addingTimeInterval(60), leasing: 0)
            try await store.recordWake(
                WakeRecord(id: "w-own", identity: alice, topic: "blocktank.incomingHtlc", deadline: t0.addingTimeInterval(60), createdAt: t0),
                deliveries: [
                    WakeDeliveryRecord(wakeID: "w-own", deviceID: first.device.id, jobID: "j-own", fallbackJobID: fallback.id, present: false)
                ])
            let moved = try await store.registerDevice(
                platform: .ios, token: String(repeating: "cd", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(install: "install-own-aaaaaa", secret: "s2", ts: 50)), now: t0)
            #expect(try await store.wakeGatewayDevice(installKey: "bitkit|install-own-aaaaaa")?.device.id == moved.device.id)
            #expect(try await store.wake(id: "w-own")?.1.map(\.deviceID) == [moved.device.id])
            let due = try await store.claimDue(now: t0.addingTimeInterval(20), leaseUntil: t0.addingTimeInterval(80), limit: 10)
            #expect(due.map(\.token) == [String(repeating: "cd", count: 32)])
            try await store.release(jobIDs: due.map(\.id))

            // The install's secret, presented, lets a registration replace it without its identities.
            var withSecret = gateway(install: "install-own-aaaaaa", secret: "s3", ts: 60)
            withSecret.presentedSecretSHA256 = "s2"
            let renewed = try await store.registerDevice(
                platform: .ios, token: String(repeating: "cd", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [mallory], wakeGateway: withSecret), now: t0)
            #expect(try await store.wakeGatewayDevice(installKey: "bitkit|install-own-aaaaaa")?.device.id == renewed.device.id)

            // Deleting the device cancels the pending fallback.
            try await store.deleteDevice(id: renewed.device.id, now: t0)
            #expect(try await store.claimDue(now: t0.addingTimeInterval(20), leaseUntil: t0.addingTimeInterval(80), limit: 10).isEmpty)
            #expect(try await store.status(jobID: fallback.id) == nil)
        }
    }

    @Test("forty registrations of one install at once settle on one device", arguments: Backend.allCases)
    func concurrentInstall(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        _ = try await store.registerDevice(
                            platform: .android, token: "fcm-race-\(index)", sealKey: nil, app: Device.defaultApp,
                            extras: DeviceExtras(
                                identities: [alice], wakeGateway: gateway(install: "install-race-aaaaaa", secret: "r\(index)", ts: 100)),
                            now: t0)
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await store.wakeGatewayDevices(identity: alice).count == 1)
        }
    }

    @Test("a fallback job is not due before its time; a handled ack deletes it, no_handler and failed leave it", arguments: Backend.allCases)
    func acksAndFallbacks(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            func fallbackJob(_ due: Date) -> NewJob {
                var job = NewJob(
                    destination: .device(.ios), token: String(repeating: "ab", count: 32), notificationType: "wake_fallback",
                    payload: Data("{}".utf8), idempotencyKey: nil, expiresAt: t0.addingTimeInterval(60), app: Device.defaultApp)
                job.dueAt = due
                return job
            }
            let handled = fallbackJob(t0.addingTimeInterval(15))
            let ignored = fallbackJob(t0.addingTimeInterval(15))
            // Even asked to lease it at once, a job due later waits.
            _ = try await store.enqueue([handled, ignored], now: t0, leaseUntil: t0.addingTimeInterval(60), leasing: 2)
            #expect(try await store.claimDue(now: t0.addingTimeInterval(1), leaseUntil: t0.addingTimeInterval(60), limit: 10).isEmpty)
            #expect(try await store.nextDueAt(now: t0) == t0.addingTimeInterval(15))

            let wake = WakeRecord(id: "w1", identity: alice, topic: "blocktank.incomingHtlc", deadline: t0.addingTimeInterval(60), createdAt: t0)
            try await store.recordWake(
                wake,
                deliveries: [
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d1", jobID: "j1", fallbackJobID: handled.id, present: false),
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d2", jobID: "j2", fallbackJobID: ignored.id, present: false),
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d3", jobID: nil, fallbackJobID: nil, present: true),
                ])
            // Recorded again (a retry under the same idempotency key): the new job id, nothing doubled.
            try await store.recordWake(
                wake, deliveries: [WakeDeliveryRecord(wakeID: "w1", deviceID: "d1", jobID: "j1", fallbackJobID: handled.id, present: false)])
            let (read, deliveries) = try #require(try await store.wake(id: "w1"))
            #expect(read == wake)
            #expect(deliveries.map(\.deviceID) == ["d1", "d2", "d3"])
            #expect(deliveries[2].present && deliveries[2].jobID == nil)

            let acked = try #require(
                try await store.acknowledgeWake(id: "w1", deviceID: "d1", outcome: .handled, now: t0.addingTimeInterval(2), receivedGrace: 10))
            #expect(acked.fallbackCancelled)
            #expect(
                try #require(try await store.acknowledgeWake(id: "w1", deviceID: "d2", outcome: .noHandler, now: t0, receivedGrace: 10))
                    .fallbackCancelled == false)
            // A later ack never undoes handled.
            #expect(try await store.acknowledgeWake(id: "w1", deviceID: "d1", outcome: .failed, now: t0, receivedGrace: 10)?.outcome == .handled)
            #expect(try await store.acknowledgeWake(id: "w1", deviceID: "nobody", outcome: .handled, now: t0, receivedGrace: 10) == nil)
            #expect(try await store.acknowledgeWake(id: "w2", deviceID: "d1", outcome: .handled, now: t0, receivedGrace: 10) == nil)

            let due = try await store.claimDue(now: t0.addingTimeInterval(16), leaseUntil: t0.addingTimeInterval(60), limit: 10)
            #expect(due.map(\.id) == [ignored.id])
            let after = try #require(try await store.wake(id: "w1")).1
            #expect(after.map(\.outcome) == [.handled, .noHandler, nil])
        }
    }

    @Test(
        "a received ack moves a pending fallback to now + grace once, never past a second before it expires; not after another outcome, nor a job being sent",
        arguments: Backend.allCases)
    func receivedPostponesFallback(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            func fallbackJob(expiresAfter: TimeInterval = 120) -> NewJob {
                var job = NewJob(
                    destination: .device(.ios), token: String(repeating: "cd", count: 32), notificationType: "wake_fallback",
                    payload: Data("{}".utf8), idempotencyKey: nil, expiresAt: t0.addingTimeInterval(expiresAfter), app: Device.defaultApp)
                job.dueAt = t0.addingTimeInterval(4)
                return job
            }
            let postponed = fallbackJob()
            let failedFirst = fallbackJob()
            // Its wake ends 8 s in: postponed to a second before that, not past it.
            let shortLived = fallbackJob(expiresAfter: 8)
            _ = try await store.enqueue([postponed, failedFirst, shortLived], now: t0, leaseUntil: t0.addingTimeInterval(60), leasing: 0)
            try await store.recordWake(
                WakeRecord(id: "w1", identity: alice, topic: "incomingHtlc", deadline: t0.addingTimeInterval(120), createdAt: t0),
                deliveries: [
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d1", jobID: "j1", fallbackJobID: postponed.id, present: false),
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d2", jobID: "j2", fallbackJobID: failedFirst.id, present: false),
                    WakeDeliveryRecord(wakeID: "w1", deviceID: "d3", jobID: "j3", fallbackJobID: shortLived.id, present: false),
                ])
            _ = try await store.acknowledgeWake(id: "w1", deviceID: "d3", outcome: .received, now: t0.addingTimeInterval(1), receivedGrace: 10)
            let received = try #require(
                try await store.acknowledgeWake(id: "w1", deviceID: "d1", outcome: .received, now: t0.addingTimeInterval(1), receivedGrace: 10))
            #expect(received.outcome == .received && !received.fallbackCancelled)
            // A repeated received does not move it further.
            _ = try await store.acknowledgeWake(id: "w1", deviceID: "d1", outcome: .received, now: t0.addingTimeInterval(3), receivedGrace: 10)
            // After failed, received has nothing to add: the fallback keeps its time.
            _ = try await store.acknowledgeWake(id: "w1", deviceID: "d2", outcome: .failed, now: t0.addingTimeInterval(1), receivedGrace: 10)
            #expect(
                try await store.acknowledgeWake(id: "w1", deviceID: "d2", outcome: .received, now: t0.addingTimeInterval(2), receivedGrace: 10)?
                    .outcome == .failed)

            let atFive = try await store.claimDue(now: t0.addingTimeInterval(5), leaseUntil: t0.addingTimeInterval(60), limit: 10)
            #expect(atFive.map(\.id) == [failedFirst.id])
            #expect(try await store.nextDueAt(now: t0.addingTimeInterval(5)) == t0.addingTimeInterval(7))
            #expect(
                try await store.claimDue(now: t0.addingTimeInterval(7), leaseUntil: t0.addingTimeInterval(60), limit: 10).map(\.id) == [shortLived.id]
            )
            #expect(try await store.nextDueAt(now: t0.addingTimeInterval(7)) == t0.addingTimeInterval(11))
            #expect(try await store.claimDue(now: t0.addingTimeInterval(10.9), leaseUntil: t0.addingTimeInterval(60), limit: 10).isEmpty)
            #expect(
                try await store.claimDue(now: t0.addingTimeInterval(11), leaseUntil: t0.addingTimeInterval(60), limit: 10).map(\.id) == [postponed.id]
            )
            // Leased (being sent): a late received leaves it alone.
            let third = try await store.acknowledgeWake(
                id: "w1", deviceID: "d1", outcome: .handled, now: t0.addingTimeInterval(12), receivedGrace: 10)
            #expect(third?.fallbackCancelled == false)
        }
    }

    @Test("a shared secret is made once, whoever asks first, stamped with the caller's time", arguments: Backend.allCases)
    func sharedSecret(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, database in
            let first = try await store.sharedSecret(name: "wake_collapse", now: t0, make: { Data([1, 2, 3]) })
            let second = try await store.sharedSecret(name: "wake_collapse", now: t0.addingTimeInterval(5), make: { Data([9]) })
            #expect(first == Data([1, 2, 3]))
            #expect(second == first)
            #expect(try await database.number("SELECT created_at FROM shared_secret WHERE name = 'wake_collapse'") == t0.timeIntervalSince1970)
        }
    }
}
