import Foundation
import HeraldStore
import HeraldWire
import Testing

let t0 = Date(timeIntervalSince1970: 1_800_000_000)

func job(_ token: String = "tok", key: String? = nil, ttl: TimeInterval = 3600) -> NewJob {
    NewJob(
        destination: .device(.ios),
        token: token,
        notificationType: "swap_updated",
        payload: Data("{}".utf8),
        idempotencyKey: key,
        expiresAt: t0.addingTimeInterval(ttl),
        app: Device.defaultApp
    )
}

/// The outbox, dead tokens and devices, written against the protocols and run on every back end.
@Suite("Store: outbox, tokens, devices")
struct OutboxStoreTests {
    @Test("an idempotency key returns the first job and stores one row", arguments: Backend.allCases)
    func idempotency(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = job(key: "k1")
            let results = try await store.enqueue(
                [first, job(key: "k1")], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            #expect(
                results == [
                    EnqueueResult(id: first.id, duplicate: false),
                    EnqueueResult(id: first.id, duplicate: true),
                ])
            let again = try await store.enqueue(
                [job(key: "k1")], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            #expect(again == [EnqueueResult(id: first.id, duplicate: true)])
            #expect(try await store.counts().pending == 1)
        }
    }

    @Test("a key sent again with another body's fingerprint is a reused key, not a retry; with the same one a retry", arguments: Backend.allCases)
    func fingerprints(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            var first = job(key: "k-print")
            first.idempotencyFingerprint = "aa"
            _ = try await store.enqueue([first], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            var retry = job(key: "k-print")
            retry.idempotencyFingerprint = "aa"
            var other = job(key: "k-print")
            other.idempotencyFingerprint = "bb"
            let results = try await store.enqueue([retry, other], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            #expect(
                results == [
                    EnqueueResult(id: first.id, duplicate: true), EnqueueResult(id: first.id, duplicate: true, keyReused: true),
                ])
            // What a retry finds before it spends anything.
            #expect(try await store.jobs(idempotencyKeys: ["k-print", "k-none"]) == ["k-print": EarlierJob(id: first.id, fingerprint: "aa")])
            #expect(try await store.counts().pending == 1)
        }
    }

    @Test(
        "a leased job is not claimed until its lease ends; only a single-process store frees every lease at once",
        arguments: Backend.allCases
    )
    func leases(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let new = job()
            _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(60))
            #expect(
                try await store.claimDue(
                    now: t0.addingTimeInterval(1), leaseUntil: t0.addingTimeInterval(61), limit: 10
                ).isEmpty)
            let late = try await store.claimDue(
                now: t0.addingTimeInterval(61), leaseUntil: t0.addingTimeInterval(121), limit: 10)
            #expect(late.map(\.id) == [new.id])
            if case .singleProcess = store.sharing {
                try await store.releaseAllLeases()
                let again = try await store.claimDue(
                    now: t0.addingTimeInterval(62), leaseUntil: t0.addingTimeInterval(122), limit: 10)
                #expect(again.map(\.id) == [new.id])
            } else {
                await #expect(throws: (any Error).self) { try await store.releaseAllLeases() }
                #expect(
                    try await store.claimDue(
                        now: t0.addingTimeInterval(62), leaseUntil: t0.addingTimeInterval(122), limit: 10
                    ).isEmpty)
            }
            #expect(backend == .sqlite ? store.sharing.capabilities == nil : store.sharing.capabilities != nil)
        }
    }

    @Test(
        "jobs past the leased count are committed unleased, claimable at once, and the next due time skips leased ones",
        arguments: Backend.allCases
    )
    func partlyLeased(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let (a, b, c) = (job(), job(), job())
            _ = try await store.enqueue(
                [a, b, c], now: t0, leaseUntil: t0.addingTimeInterval(60), leasing: 1)
            #expect(try await store.nextDueAt(now: t0) == t0)
            let claimed = try await store.claimDue(
                now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
            #expect(Set(claimed.map(\.id)) == [b.id, c.id])
            #expect(try await store.nextDueAt(now: t0) == nil)  // every pending job is leased
            try await store.complete(
                [
                    JobCompletion(
                        job: claimed[0], resolution: .retry(at: t0.addingTimeInterval(30), error: "503"))
                ], now: t0
            )
            #expect(try await store.nextDueAt(now: t0) == t0.addingTimeInterval(30))
            // Once a lease has run out its job is due again, at its own due time.
            #expect(try await store.nextDueAt(now: t0.addingTimeInterval(61)) == t0)
        }
    }

    @Test(
        "a retry is claimed again only when it is due, with the attempt counted",
        arguments: Backend.allCases)
    func retry(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let new = job()
            _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            let claimed = try await store.claimDue(
                now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
            #expect(claimed.first?.payload == Data("{}".utf8))
            #expect(claimed.first?.createdAt == t0)
            try await store.complete(
                [
                    JobCompletion(
                        job: try #require(claimed.first),
                        resolution: .retry(at: t0.addingTimeInterval(30), error: "retry 503"))
                ],
                now: t0
            )
            #expect(
                try await store.claimDue(
                    now: t0.addingTimeInterval(29), leaseUntil: t0.addingTimeInterval(90), limit: 10
                ).isEmpty)
            let due = try await store.claimDue(
                now: t0.addingTimeInterval(30), leaseUntil: t0.addingTimeInterval(90), limit: 10)
            #expect(due.first?.attempts == 1)
            let status = try await store.status(jobID: new.id)
            #expect(status?.lastError == "retry 503")
            #expect(status?.state == .pending)
            #expect(status?.nextAttemptAt == t0.addingTimeInterval(30))
            #expect(try await store.status(jobID: "no-such-job") == nil)
        }
    }

    @Test(
        "outcomes of one batch land together: delivered, dead-lettered, retried",
        arguments: Backend.allCases)
    func mixedCompletions(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let jobs = [job("a"), job("b"), job("c")]
            _ = try await store.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                [
                    JobCompletion(job: OutboxJob(jobs[0], createdAt: t0), resolution: .delivered),
                    JobCompletion(
                        job: OutboxJob(jobs[1], createdAt: t0), resolution: .deadLetter(reason: "BadTopic")),
                    JobCompletion(
                        job: OutboxJob(jobs[2], createdAt: t0),
                        resolution: .retry(at: t0.addingTimeInterval(5), error: "429")),
                ],
                now: t0
            )
            #expect(try await store.counts() == QueueCounts(pending: 1, delivered: 1, dead: 1))
            #expect(try await store.status(jobID: jobs[1].id)?.lastError == "BadTopic")
            #expect(try await store.status(jobID: jobs[0].id)?.attempts == 1)
            // A job already finished is not moved by a late outcome.
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(jobs[0], createdAt: t0), resolution: .deadLetter(reason: "late"))
                ], now: t0)
            #expect(try await store.status(jobID: jobs[0].id)?.state == .delivered)
            // Released jobs are claimable at once, no attempt counted.
            try await store.release(jobIDs: [jobs[2].id])
            let again = try await store.claimDue(
                now: t0.addingTimeInterval(5), leaseUntil: t0.addingTimeInterval(65), limit: 10)
            #expect(again.map(\.id) == [jobs[2].id])
            #expect(again.first?.attempts == 1)
        }
    }

    @Test(
        "a holder whose lease ran out and was taken over neither frees nor retries nor dead-letters the job; its delivery still counts",
        arguments: Backend.allCases)
    func leaseOwnership(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let jobs = [job("6f776e65722d61"), job("6f776e65722d62")]
            _ = try await store.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(-1))
            let first = t0.addingTimeInterval(5)
            #expect(try await store.claimDue(now: t0, leaseUntil: first, limit: 10).count == 2)
            // The first holder stalls past its lease; another takes both jobs over.
            let second = t0.addingTimeInterval(11)
            #expect(try await store.claimDue(now: t0.addingTimeInterval(6), leaseUntil: second, limit: 10).count == 2)
            // The stalled holder's late outcomes and release leave the new holder's lease alone.
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(jobs[0], createdAt: t0), resolution: .retry(at: t0.addingTimeInterval(7), error: "timeout"),
                        leaseUntil: first),
                    JobCompletion(job: OutboxJob(jobs[1], createdAt: t0), resolution: .deadLetter(reason: "late", answer: "500"), leaseUntil: first),
                ], now: t0.addingTimeInterval(7))
            try await store.release(jobIDs: jobs.map(\.id), leasedUntil: first)
            #expect(try await store.claimDue(now: t0.addingTimeInterval(8), leaseUntil: t0.addingTimeInterval(20), limit: 10).isEmpty)
            #expect(try await store.status(jobID: jobs[0].id)?.attempts == 0)
            #expect(try await store.status(jobID: jobs[1].id)?.state == .pending)
            // A delivery is a fact whoever made it.
            try await store.complete(
                [JobCompletion(job: OutboxJob(jobs[1], createdAt: t0), resolution: .delivered, leaseUntil: first)], now: t0.addingTimeInterval(8))
            #expect(try await store.status(jobID: jobs[1].id)?.state == .delivered)
            // The holder of the current lease is heard.
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(jobs[0], createdAt: t0), resolution: .retry(at: t0.addingTimeInterval(9), error: "429"),
                        leaseUntil: second)
                ], now: t0.addingTimeInterval(8))
            #expect(try await store.status(jobID: jobs[0].id)?.attempts == 1)
            let again = try await store.claimDue(now: t0.addingTimeInterval(9), leaseUntil: t0.addingTimeInterval(30), limit: 10)
            #expect(again.map(\.id) == [jobs[0].id])
            try await store.release(jobIDs: [jobs[0].id], leasedUntil: t0.addingTimeInterval(30))
            #expect(
                try await store.claimDue(now: t0.addingTimeInterval(10), leaseUntil: t0.addingTimeInterval(40), limit: 10).map(\.id) == [jobs[0].id])
        }
    }

    @Test(
        "a claimed row of a platform this build does not know is dead-lettered, not leased again for ever; the rest of the claim goes on",
        arguments: Backend.allCases)
    func unknownPlatform(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, raw in
            let jobs = [job("756e6b6e6f776e2d61"), job("756e6b6e6f776e2d62")]
            _ = try await store.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(-1))
            // As a newer version that knows another destination would have written it.
            try await raw.execute("UPDATE job SET platform = 'carrier-pigeon' WHERE id = '\(jobs[0].id)'")
            let claimed = try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(5), limit: 10)
            #expect(claimed.map(\.id) == [jobs[1].id])
            let status = try #require(try await store.status(jobID: jobs[0].id))
            #expect(status.state == .dead)
            #expect(status.lastError == "unknown_platform: carrier-pigeon")
            // Once the lease runs out, the readable job comes back; the other never does.
            #expect(
                try await store.claimDue(now: t0.addingTimeInterval(10), leaseUntil: t0.addingTimeInterval(15), limit: 10).map(\.id) == [jobs[1].id])
        }
    }

    @Test(
        "a dead token dead-letters its other pending jobs and is remembered",
        arguments: Backend.allCases)
    func deadToken(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let a = job("646561642d746f6b656e")
            let b = job("646561642d746f6b656e")
            let c = job("6c6976652d746f6b656e")
            _ = try await store.enqueue([a, b, c], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            let claimed = try await store.claimDue(
                now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 1)
            try await store.complete(
                [
                    JobCompletion(
                        job: try #require(claimed.first), resolution: .tokenDead(reason: "Unregistered"))
                ], now: t0
            )
            #expect(try await store.isDead(platform: .ios, token: "646561642d746f6b656e"))
            #expect(try await store.isDead(platform: .ios, token: "6c6976652d746f6b656e") == false)
            #expect(try await store.isDead(platform: .android, token: "646561642d746f6b656e") == false)
            #expect(try await store.status(jobID: b.id)?.state == .dead)
            #expect(try await store.status(jobID: c.id)?.state == .pending)
        }
    }

    @Test(
        "devices: the secret opens the device, the alias finds it, rotation moves the token",
        arguments: Backend.allCases)
    func devices(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let registration = try await store.registerDevice(platform: .android, token: "fcm-1", now: t0)
            #expect(registration.device.alias.count >= 22)  // ≥ 128 bits of base64url
            #expect(try await store.device(alias: registration.device.alias)?.token == "fcm-1")
            #expect(try await store.device(id: registration.device.id, secret: "wrong") == nil)
            #expect(
                try await store.device(id: registration.device.id, secret: registration.secret)
                    == registration.device)
            #expect(
                try await store.resolveDevice(id: registration.device.id)
                    == WebhookTokenResolution(device: registration.device, isDead: false))
            #expect(try await store.resolveDevice(id: "nobody") == nil)
            _ = try await store.updateDevice(
                id: registration.device.id, changes: DeviceChanges(pushToken: .set(.init(platform: .android, token: "fcm-2"))), now: t0)
            #expect(try await store.device(alias: registration.device.alias)?.token == "fcm-2")
            try await store.markDead(platform: .android, token: "fcm-2", reason: "UNREGISTERED", now: t0)
            #expect(try await store.resolveDevice(id: registration.device.id)?.isDead == true)
            try await store.deleteDevice(id: registration.device.id, now: t0)
            #expect(try await store.device(alias: registration.device.alias) == nil)
        }
    }

    @Test(
        "webhook token lookups follow every change to devices and dead tokens",
        arguments: Backend.allCases)
    func tokenResolutionFollowsWrites(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let registration = try await store.registerDevice(platform: .ios, token: "61706e732d31", now: t0)
            let alias = registration.device.alias
            #expect(
                try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.token == "61706e732d31")
            _ = try await store.updateDevice(
                id: registration.device.id, changes: DeviceChanges(pushToken: .set(.init(platform: .ios, token: "61706e732d32"))), now: t0)
            #expect(
                try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.token == "61706e732d32")

            // The dispatcher learns the token is gone.
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).isDead == false)
            let pending = job("61706e732d32")
            _ = try await store.enqueue([pending], now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(pending, createdAt: t0), resolution: .tokenDead(reason: "Unregistered"))
                ],
                now: t0
            )
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).isDead)

            // A raw token (Breez style), then marked dead directly.
            let raw = try await store.resolveWebhookToken("raw-1", rawPlatform: .android)
            #expect(raw.device == nil && !raw.isDead)
            try await store.markDead(platform: .android, token: "raw-1", reason: "UNREGISTERED", now: t0)
            #expect(try await store.resolveWebhookToken("raw-1", rawPlatform: .android).isDead)
            #expect(try await store.resolveWebhookToken("raw-1", rawPlatform: .ios).isDead == false)
            #expect(try await store.resolveWebhookToken("raw-1", rawPlatform: nil).isDead == false)

            try await store.deleteDevice(id: registration.device.id, now: t0)
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device == nil)
            let again = try await store.registerDevice(platform: .android, token: "fcm-9", now: t0)
            #expect(
                try await store.resolveWebhookToken(again.device.alias, rawPlatform: nil).device?.token
                    == "fcm-9")
        }
    }

    @Test(
        "pushes the local provider recorded are read back per device, in order",
        arguments: Backend.allCases)
    func localPushes(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            var android = job("74")
            android.destination = .device(.android)
            let jobs = [job("74"), android]
            _ = try await store.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(jobs[0], createdAt: t0), resolution: .delivered,
                        localPushes: ["1", "2", "3"].map { Data($0.utf8) }),
                    JobCompletion(job: OutboxJob(jobs[1], createdAt: t0), resolution: .delivered, localPushes: [Data("x".utf8)]),
                ],
                now: t0)
            let all = try await store.localPushes(platform: .ios, token: "74", after: 0, limit: 10)
            #expect(all.map(\.payload) == ["1", "2", "3"].map { Data($0.utf8) })
            #expect(all.allSatisfy { $0.createdAt == t0 && $0.platform == .ios })
            let later = try await store.localPushes(
                platform: .ios, token: "74", after: all[0].seq, limit: 1)
            #expect(later.map(\.seq) == [all[1].seq])
        }
    }

    @Test(
        "the local provider's pushes are written with their jobs' outcomes, whatever the outcome",
        arguments: Backend.allCases)
    func localPushesWithOutcomes(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let jobs = [job("75"), job("76")]
            _ = try await store.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                [
                    JobCompletion(
                        job: OutboxJob(jobs[0], createdAt: t0), resolution: .delivered, localPushes: [Data("a".utf8)]),
                    // A prelude went out and the main push did not: what went out is still shown.
                    JobCompletion(
                        job: OutboxJob(jobs[1], createdAt: t0), resolution: .retry(at: t0.addingTimeInterval(5), error: "x"),
                        localPushes: [Data("b1".utf8), Data("b2".utf8)]),
                ],
                now: t0
            )
            #expect(try await store.status(jobID: jobs[0].id)?.state == .delivered)
            #expect(try await store.status(jobID: jobs[1].id)?.attempts == 1)
            let first = try await store.localPushes(platform: .ios, token: "75", after: 0, limit: 10)
            #expect(first.map(\.payload) == [Data("a".utf8)])
            #expect(first.allSatisfy { $0.createdAt == t0 })
            let second = try await store.localPushes(platform: .ios, token: "76", after: 0, limit: 10)
            #expect(second.map(\.payload) == ["b1", "b2"].map { Data($0.utf8) })
        }
    }

    @Test("finished jobs are purged after their retention", arguments: Backend.allCases)
    func purge(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let new = job()
            _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(-1))
            let claimed = try await store.claimDue(
                now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10)
            try await store.complete(
                [JobCompletion(job: try #require(claimed.first), resolution: .delivered)], now: t0)
            #expect(try await store.purgeFinished(deliveredBefore: t0, deadBefore: t0) == 0)
            #expect(
                try await store.purgeFinished(deliveredBefore: t0.addingTimeInterval(1), deadBefore: t0)
                    == 1)
        }
    }

    @Test(
        "finished jobs are purged in slices; pending ones stay and are counted",
        arguments: Backend.allCases)
    func purgeSlices(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let finished = (0..<2_500).map { _ in job() }
            let pending = (0..<3).map { _ in job() }
            _ = try await store.enqueue(
                finished + pending, now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                finished.map { JobCompletion(job: OutboxJob($0, createdAt: t0), resolution: .delivered) },
                now: t0
            )
            #expect(try await store.pendingCount() == 3)
            #expect(
                try await store.purgeFinished(deliveredBefore: t0.addingTimeInterval(1), deadBefore: t0)
                    == 2_500)
            #expect(try await store.counts() == QueueCounts(pending: 3, delivered: 0, dead: 0))
        }
    }

    @Test("the health check's ping answers", arguments: Backend.allCases)
    func ping(_ backend: Backend) async throws {
        try await withStore(backend) { store in try await store.ping() }
    }
}
