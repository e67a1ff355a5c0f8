import Foundation
import HeraldStore
import HeraldWire
import Testing

/// Makes dead letters the way the dispatcher does: enqueued, claimed, tried, given up on.
private func deadLetter(
    _ store: any HeraldStoreBackend, token: String, platform: Platform = .ios, reason: String,
    answer: String? = nil, triedAt: Date = t0, diedAt: Date = t0.addingTimeInterval(10)
) async throws -> String {
    let new = NewJob(
        destination: .device(platform), token: token, notificationType: "swap_updated", payload: Data(#"{"n":1}"#.utf8),
        idempotencyKey: nil, expiresAt: t0.addingTimeInterval(600), app: Device.defaultApp
    )
    _ = try await store.enqueue([new], now: t0, leaseUntil: t0.addingTimeInterval(60))
    let job = OutboxJob(new, createdAt: t0)
    try await store.complete([JobCompletion(job: job, resolution: .retry(at: triedAt, error: "503 first"))], now: triedAt)
    try await store.complete([JobCompletion(job: job, resolution: .deadLetter(reason: reason, answer: answer))], now: diedAt)
    return new.id
}

private let plan = ReplayPlan(now: t0.addingTimeInterval(100)) { payload, expiresAt in
    payload + Data(" until \(Int(expiresAt.timeIntervalSince1970))".utf8)
}

/// Dead letters and the outbox's shape for operators, run on every back end.
@Suite("Store: dead letters")
struct DeadLetterStoreTests {
    @Test("a dead letter shows its reason, the provider's last answer and its attempt times; filters and pages work", arguments: Backend.allCases)
    func listing(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let expired = try await deadLetter(
                store, token: "tok-expired-0001", reason: "ttl_expired: 503 ServiceUnavailable",
                answer: "503 ServiceUnavailable", triedAt: t0.addingTimeInterval(1), diedAt: t0.addingTimeInterval(5)
            )
            // Died before a send: the earlier answer and times stay.
            let waited = try await deadLetter(
                store, token: "tok-waited-0002", reason: "ttl_expired", answer: nil,
                triedAt: t0.addingTimeInterval(2), diedAt: t0.addingTimeInterval(6)
            )
            let permanent = try await deadLetter(
                store, token: "fcm-tok-0003", platform: .android, reason: "permanent: 400 INVALID_ARGUMENT",
                answer: "400 INVALID_ARGUMENT", diedAt: t0.addingTimeInterval(7)
            )
            let all = try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil)
            #expect(all.letters.map(\.id) == [permanent, waited, expired])
            #expect(all.next == nil)
            let first = try #require(all.letters.last)
            #expect(first.reason == "ttl_expired")
            #expect(first.lastError == "ttl_expired: 503 ServiceUnavailable")
            #expect(first.providerAnswer == "503 ServiceUnavailable")
            #expect(first.attempts == 2)
            #expect(first.firstAttemptAt == t0.addingTimeInterval(1))
            #expect(first.lastAttemptAt == t0.addingTimeInterval(5))
            #expect(first.token == "tok-expired-0001")
            let second = all.letters[1]
            #expect(second.providerAnswer == "503 first")
            #expect(second.lastAttemptAt == t0.addingTimeInterval(2))
            // It died waiting for its retry: one send was made, one attempt counted.
            #expect(second.attempts == 1)

            let expiredOnly = try await store.deadLetters(matching: DeadLetterFilter(reason: "ttl_expired"), limit: 10, after: nil)
            #expect(Set(expiredOnly.letters.map(\.id)) == [expired, waited])
            #expect(try await store.deadLetters(matching: DeadLetterFilter(reason: "ttl"), limit: 10, after: nil).letters.isEmpty)
            let android = try await store.deadLetters(matching: DeadLetterFilter(destination: .device(.android)), limit: 10, after: nil)
            #expect(android.letters.map(\.id) == [permanent])

            let page1 = try await store.deadLetters(matching: DeadLetterFilter(), limit: 2, after: nil)
            #expect(page1.letters.map(\.id) == [permanent, waited])
            let cursor = try #require(page1.next)
            #expect(DeadLetterCursor(text: cursor.text) == cursor)
            let page2 = try await store.deadLetters(matching: DeadLetterFilter(), limit: 2, after: cursor)
            #expect(page2.letters.map(\.id) == [expired])
            #expect(page2.next == nil)
        }
    }

    @Test("a replay enqueues the push once as a new job; a second replay does nothing", arguments: Backend.allCases)
    func replayOnce(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let id = try await deadLetter(store, token: "tok-replay-0001", reason: "ttl_expired")
            guard case .replayed(let jobID) = try await store.replayDeadLetter(id: id, plan: plan) else {
                Issue.record("not replayed")
                return
            }
            #expect(try await store.replayDeadLetter(id: id, plan: plan) == .alreadyReplayed(jobID: jobID))
            #expect(try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil).letters.isEmpty)
            let claimed = try await store.claimDue(now: t0.addingTimeInterval(100), leaseUntil: t0.addingTimeInterval(200), limit: 10)
            #expect(claimed.map(\.id) == [jobID])
            let job = try #require(claimed.first)
            // The letter's ten-minute TTL again, from the replay; the payload rewritten for it.
            #expect(job.expiresAt == t0.addingTimeInterval(700))
            #expect(job.payload == Data(#"{"n":1} until \#(Int(t0.timeIntervalSince1970) + 700)"#.utf8))
            #expect(job.token == "tok-replay-0001")
            #expect(job.attempts == 0)
            #expect(try await store.replayDeadLetter(id: jobID, plan: plan) == .notFound)  // pending, not dead
            #expect(try await store.replayDeadLetter(id: "no-such-letter", plan: plan) == .notFound)
        }
    }

    @Test("a letter whose token is dead is not replayed, alone or by filter", arguments: Backend.allCases)
    func deadTokenRefused(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let id = try await deadLetter(store, token: "746f6b2d676f6e652d30303031", reason: "ttl_expired")
            let live = try await deadLetter(store, token: "tok-live-0002", reason: "ttl_expired")
            try await store.markDead(platform: .ios, token: "746f6b2d676f6e652d30303031", reason: "Unregistered", now: t0)
            #expect(try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil).letters.first { $0.id == id }?.tokenDead == true)
            #expect(try await store.replayDeadLetter(id: id, plan: plan) == .tokenDead)
            let bulk = try await store.replayDeadLetters(matching: DeadLetterFilter(), limit: 100, plan: plan)
            #expect(bulk.jobIDs.count == 1)
            #expect(bulk.skippedTokenDead == 1)
            let remaining = try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil).letters.map(\.id)
            #expect(remaining == [id])
            #expect(!remaining.contains(live))
            #expect(try await store.counts().pending == 1)
        }
    }

    @Test("many concurrent replays of one letter make one job", arguments: Backend.allCases)
    func concurrentReplays(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let id = try await deadLetter(store, token: "tok-race-0001", reason: "max_attempts: 503")
            let outcomes = try await withThrowingTaskGroup(of: ReplayOutcome.self) { group in
                for _ in 0..<40 { group.addTask { try await store.replayDeadLetter(id: id, plan: plan) } }
                return try await group.reduce(into: [ReplayOutcome]()) { $0.append($1) }
            }
            let made = outcomes.compactMap { if case .replayed(let job) = $0 { job } else { nil } }
            #expect(made.count == 1)
            let job = try #require(made.first)
            #expect(outcomes.filter { $0 == .alreadyReplayed(jobID: job) }.count == 39)
            #expect(try await store.counts().pending == 1)
        }
    }

    @Test("concurrent replays by filter replay each letter once", arguments: Backend.allCases)
    func concurrentBulkReplays(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            for index in 0..<20 { _ = try await deadLetter(store, token: "tok-bulk-\(1000 + index)", reason: "ttl_expired") }
            let results = try await withThrowingTaskGroup(of: BulkReplay.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await store.replayDeadLetters(matching: DeadLetterFilter(reason: "ttl_expired"), limit: 100, plan: plan) }
                }
                return try await group.reduce(into: [BulkReplay]()) { $0.append($1) }
            }
            #expect(results.reduce(0) { $0 + $1.jobIDs.count } == 20)
            #expect(try await store.counts().pending == 20)
        }
    }

    @Test("purging deletes one letter by id, or every match of a filter", arguments: Backend.allCases)
    func purge(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let a = try await deadLetter(store, token: "tok-purge-0001", reason: "ttl_expired")
            _ = try await deadLetter(store, token: "tok-purge-0002", reason: "ttl_expired: 503")
            let c = try await deadLetter(store, token: "fcm-purge-0003", platform: .android, reason: "ttl_expired")
            let kept = try await deadLetter(store, token: "tok-purge-0004", reason: "permanent: 400")
            #expect(try await store.purgeDeadLetter(id: a))
            #expect(try await store.purgeDeadLetter(id: a) == false)
            #expect(
                try await store.purgeDeadLetters(matching: DeadLetterFilter(reason: "ttl_expired", destination: .device(.ios)))
                    == DeadLetterPurge(purged: 1, replayed: 0))
            let left = try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil).letters.map(\.id)
            #expect(Set(left) == [c, kept])
            // A replayed letter is purged too, and said to be.
            _ = try await store.replayDeadLetter(id: c, plan: ReplayPlan(now: t0))
            #expect(try await store.purgeDeadLetters(matching: DeadLetterFilter()) == DeadLetterPurge(purged: 2, replayed: 1))
            #expect(try await store.counts().dead == 0)
        }
    }

    @Test("every job column, the app included, round trips through intake, lease, dead letter and replay", arguments: Backend.allCases)
    func replayKeepsEveryColumn(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let new = NewJob(
                destination: .device(.android), token: "fcm-roundtrip-0001", notificationType: "wake:incomingHtlc",
                payload: Data(#"{"kind":"wake"}"#.utf8), idempotencyKey: "k-roundtrip", expiresAt: t0.addingTimeInterval(600),
                app: "com.example.beta"
            )
            _ = try await store.enqueue([new], now: t0, leaseUntil: t0, leasing: 0)
            let claimed = try #require(try await store.claimDue(now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 10).first)
            #expect(claimed == OutboxJob(new, createdAt: t0))
            try await store.complete([JobCompletion(job: claimed, resolution: .deadLetter(reason: "permanent", answer: nil))], now: t0)
            guard case .replayed(let id) = try await store.replayDeadLetter(id: new.id, plan: plan) else {
                Issue.record("the letter was not replayed")
                return
            }
            let replayed = try #require(try await store.claimDue(now: plan.now, leaseUntil: plan.now.addingTimeInterval(60), limit: 10).first)
            let expiry = plan.now.addingTimeInterval(600)
            #expect(
                replayed
                    == OutboxJob(
                        id: id, destination: .device(.android), token: "fcm-roundtrip-0001", notificationType: "wake:incomingHtlc",
                        payload: Data(#"{"kind":"wake"} until \#(Int(expiry.timeIntervalSince1970))"#.utf8), attempts: 0,
                        createdAt: plan.now, expiresAt: expiry, app: "com.example.beta"
                    ))
        }
    }

    @Test(
        "the outbox summary counts pending, leased and retrying jobs by platform and app, the oldest due time and dead letters",
        arguments: Backend.allCases)
    func summary(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let leased = job("tok-a")
            _ = try await store.enqueue([leased], now: t0, leaseUntil: t0.addingTimeInterval(60))
            let waiting = NewJob(
                destination: .device(.android), token: "fcm-b", notificationType: "x", payload: Data(), idempotencyKey: nil,
                expiresAt: t0.addingTimeInterval(600), app: "com.example.beta"
            )
            _ = try await store.enqueue([waiting], now: t0.addingTimeInterval(1), leaseUntil: t0, leasing: 0)
            let retrying = job("tok-c")
            _ = try await store.enqueue([retrying], now: t0, leaseUntil: t0.addingTimeInterval(60))
            try await store.complete(
                [JobCompletion(job: OutboxJob(retrying, createdAt: t0), resolution: .retry(at: t0.addingTimeInterval(30), error: "503"))],
                now: t0
            )
            _ = try await deadLetter(store, token: "tok-d", reason: "ttl_expired")
            try await store.markDead(platform: .ios, token: "746f6b2d65", reason: "Unregistered", now: t0)

            let summary = try await store.outboxSummary(now: t0.addingTimeInterval(2))
            #expect(summary.total == OutboxCounts(pending: 1, leased: 1, retrying: 1))
            #expect(summary.byDestination[.device(.ios)] == OutboxCounts(pending: 0, leased: 1, retrying: 1))
            #expect(summary.byDestination[.device(.android)] == OutboxCounts(pending: 1, leased: 0, retrying: 0))
            #expect(
                summary.byApp == [
                    "default": OutboxCounts(pending: 0, leased: 1, retrying: 1),
                    "com.example.beta": OutboxCounts(pending: 1, leased: 0, retrying: 0),
                ])
            #expect(summary.oldestDueAt == t0)
            #expect(summary.deadLetters == 1)
            #expect(summary.deadTokens == 1)
            // Once the lease has run out the job counts as pending again.
            #expect(try await store.outboxSummary(now: t0.addingTimeInterval(61)).total.leased == 0)
        }
    }
}
