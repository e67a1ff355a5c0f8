import Foundation
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Testing

/// What only the PostgreSQL store does: several instances on one database.
@Suite("PostgreSQL store: several instances on one database")
struct PostgresStoreTests {
    @Test("instances claiming at once take disjoint jobs, and every job exactly once")
    func skipLocked() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 3) { stores in
            let jobs = (0..<600).map { _ in job() }
            _ = try await stores[0].enqueue(jobs, now: t0, leaseUntil: t0, leasing: 0)
            let claims = try await withThrowingTaskGroup(of: [String].self) { group in
                for store in stores {
                    group.addTask {
                        var mine: [String] = []
                        while true {
                            let batch = try await store.claimDue(
                                now: t0, leaseUntil: t0.addingTimeInterval(60), limit: 25)
                            if batch.isEmpty { return mine }
                            mine += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let all = claims.flatMap { $0 }
            #expect(all.count == jobs.count)
            #expect(Set(all) == Set(jobs.map(\.id)))
        }
    }

    @Test("a crashed instance's leased jobs go to another only once the lease has run out")
    func leaseTakeover() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let (crashed, survivor) = (stores[0], stores[1])
            let jobs = (0..<5).map { _ in job() }
            // The first instance took the jobs leased to itself for 60 s, then died.
            _ = try await crashed.enqueue(jobs, now: t0, leaseUntil: t0.addingTimeInterval(60))
            #expect(
                try await survivor.claimDue(
                    now: t0.addingTimeInterval(59), leaseUntil: t0.addingTimeInterval(119), limit: 10
                ).isEmpty)
            #expect(try await survivor.nextDueAt(now: t0.addingTimeInterval(59)) == nil)
            #expect(try await survivor.nextDueAt(now: t0.addingTimeInterval(61)) == t0)
            let taken = try await survivor.claimDue(
                now: t0.addingTimeInterval(61), leaseUntil: t0.addingTimeInterval(121), limit: 10)
            #expect(Set(taken.map(\.id)) == Set(jobs.map(\.id)))
            try await survivor.complete(
                taken.map { JobCompletion(job: $0, resolution: .delivered) }, now: t0.addingTimeInterval(62)
            )
            #expect(try await crashed.counts() == QueueCounts(pending: 0, delivered: 5, dead: 0))
        }
    }

    @Test("one idempotency key sent to two instances at once makes one job")
    func idempotencyAcrossInstances() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let results = try await withThrowingTaskGroup(of: [EnqueueResult].self) { group in
                for store in stores {
                    group.addTask {
                        try await store.enqueue((0..<50).map { job(key: "k\($0)") }, now: t0, leaseUntil: t0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(try await stores[0].counts().pending == 50)
            for index in 0..<50 {
                // Both callers got the same id; exactly one of them made it.
                #expect(results[0][index].id == results[1][index].id)
                #expect(results[0][index].duplicate != results[1][index].duplicate)
            }
        }
    }

    @Test("what one instance writes, the other reads at once: no cache between them")
    func noStaleReads() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let (a, b) = (stores[0], stores[1])
            let registration = try await a.registerDevice(platform: .ios, token: "61706e732d31", now: t0)
            let alias = registration.device.alias
            #expect(try await b.resolveWebhookToken(alias, rawPlatform: nil).isDead == false)
            try await a.markDead(platform: .ios, token: "61706e732d31", reason: "Unregistered", now: t0)
            #expect(try await b.resolveWebhookToken(alias, rawPlatform: nil).isDead)
            let key = try await a.createAPIKey(name: "ledger", scopes: [.events], now: t0)
            #expect(try await a.revokeAPIKey(id: key.key.id, now: t0))
            #expect(try await b.apiKey(secret: key.secret)?.isRevoked == true)
            let reply = try await a.createReply(
                kind: "invoice_request", now: t0, expiresAt: t0.addingTimeInterval(30))
            #expect(
                try await b.answerReply(id: reply, answer: ReplyAnswer(body: Data("{}".utf8)), now: t0)
                    == .accepted)
            #expect(try await a.answeredReplies(ids: [reply]).count == 1)
        }
    }

    @Test("migrations run once however many instances start together, and again is a no-op")
    func migrationsOnce() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let location = try PostgresLocation(url: database.url)
        let stores = (0..<4).map { _ in
            PostgresStore(location: location, maximumConnections: 1, logger: quietLogger)
        }
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for store in stores { group.addTask { try await store.migrate() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(applied.filter { !$0.isEmpty } == [Array(1...16)])
        #expect(try await stores[0].migrate() == [])
    }

    @Test("a database that cannot be reached is a StoreError, not a crash")
    func unreachable() async throws {
        let port = try LoopbackPort.free()
        let store = PostgresStore(
            location: try PostgresLocation(url: "postgres://herald:secret@127.0.0.1:\(port)/herald"),
            logger: quietLogger
        )
        await #expect(throws: StoreError.self) { try await store.migrate() }
    }
}

@Suite("postgres:// URLs")
struct PostgresLocationTests {
    @Test("user, password, host, port and database are read; the password never shows")
    func parse() throws {
        let location = try PostgresLocation(
            url: "postgres://herald:p%40ss@db.internal:6543/nds?sslmode=require")
        #expect(
            location
                == PostgresLocation(
                    host: "db.internal", port: 6543, username: "herald", password: "p@ss", database: "nds",
                    tls: .require))
        #expect(location.redacted == "postgres://herald:***@db.internal:6543/nds")
        #expect(!location.redacted.contains("p@ss"))
        let local = try PostgresLocation(url: "postgresql://postgres@127.0.0.1/herald")
        #expect(local.port == 5432 && local.tls == .disable && local.password == nil)
        #expect(try PostgresLocation(url: "postgres://u@remote/h").tls == .prefer)
    }

    @Test(
        "incomplete URLs are refused without quoting them",
        arguments: [
            "postgres://host/db", "postgres://u:secretpw@host", "postgres://u:secretpw@/db",
            "sqlite:herald.sqlite",
        ]
    )
    func refused(_ text: String) {
        #expect(throws: PostgresLocationError.self) { try PostgresLocation(url: text) }
        do { _ = try PostgresLocation(url: text) } catch {
            #expect(!error.description.contains("secretpw"))
        }
    }

    @Test("two instances share one device's push allowance: the burst once between them, all or none per call")
    func sharedAllowance() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            // Burst 5, one a second: 20 concurrent takes through two instances, 5 granted.
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await stores[index % 2].takeTargetPushes(keys: ["phone"], capacity: 5, refillPerSecond: 1, now: now) == nil
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 5)
            let wait = try #require(try await stores[1].takeTargetPushes(keys: ["phone"], capacity: 5, refillPerSecond: 1, now: now))
            #expect(abs(wait - 1) < 0.001)
            // A call for two targets, one of them empty, takes from neither.
            #expect(try await stores[0].takeTargetPushes(keys: ["other", "phone"], capacity: 5, refillPerSecond: 1, now: now) != nil)
            for _ in 0..<5 {
                #expect(try await stores[0].takeTargetPushes(keys: ["other"], capacity: 5, refillPerSecond: 1, now: now) == nil)
            }
            // Refilled a second later: one more.
            let later = now.addingTimeInterval(1)
            #expect(try await stores[1].takeTargetPushes(keys: ["phone"], capacity: 5, refillPerSecond: 1, now: later) == nil)
            #expect(try await stores[0].takeTargetPushes(keys: ["phone"], capacity: 5, refillPerSecond: 1, now: later) != nil)
        }
    }

    @Test("webhooks to many targets at once, through two instances: each target's burst granted exactly once, each refusal with its wait")
    func batchedAllowances() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            // 12 targets, 4 takes each at once, a burst of 2: concurrent takes share statements,
            // a target asked twice waits for the next one.
            let answers = try await withThrowingTaskGroup(of: (String, TimeInterval?).self) { group in
                for index in 0..<48 {
                    let key = "target-\(index % 12)"
                    group.addTask {
                        (key, try await stores[index % 2].takeTargetPushes(keys: [key], capacity: 2, refillPerSecond: 1, now: now))
                    }
                }
                return try await group.reduce(into: [(String, TimeInterval?)]()) { $0.append($1) }
            }
            let byKey = Dictionary(grouping: answers, by: \.0)
            #expect(byKey.count == 12)
            for (key, takes) in byKey {
                #expect(takes.filter { $0.1 == nil }.count == 2, "\(key): \(takes.map(\.1))")
                #expect(takes.compactMap(\.1).allSatisfy { abs($0 - 1) < 0.001 }, "\(key): \(takes.map(\.1))")
            }
        }
    }
}
