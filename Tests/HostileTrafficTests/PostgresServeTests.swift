import Foundation
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// `herald serve` processes on one PostgreSQL database, with the local development provider:
/// every push it "sends" is a `local_push` row, read back here through the store.
@Suite("herald serve on PostgreSQL", .serialized)
struct PostgresServeTests {
    /// The store the servers write, read from the test; its pool runs while `body` does.
    static func withReader(
        _ database: ThrowawayPostgres.Database, _ body: (PostgresStore) async throws -> Void
    ) async throws {
        let logger = Logger(label: "herald.e2e", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = PostgresStore(
            location: try PostgresLocation(url: database.url), maximumConnections: 2, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.client.run() }
            defer { group.cancelAll() }
            try await body(store)
        }
    }

    /// Pushes recorded for each token.
    static func pushes(_ store: PostgresStore, tokens: [String]) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for token in tokens {
            counts[token] = try await store.localPushes(platform: .ios, token: token, after: 0, limit: 10).count
        }
        return counts
    }

    static func send(_ server: ServerProcess, token: String) async -> Bool {
        let exchange = await RawHTTP.exchange(
            port: server.port,
            request: .post("/api/v1/notify?platform=ios&token=\(token)", body: swapWebhook(id: token)),
            timeout: .seconds(10)
        )
        return exchange.statuses.first == 200
    }

    @Test("a webhook to herald serve on PostgreSQL reaches the local provider")
    func delivers() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits, database: database.url)
        defer { _ = server }
        #expect(await Self.send(server, token: TestToken.apns("pg-one")))
        try await Self.withReader(database) { store in
            // The push is recorded a moment before its job's outcome is: wait for both.
            let arrived = try await eventually(timeout: .seconds(15)) {
                let pushed = try await Self.pushes(store, tokens: [TestToken.apns("pg-one")])[TestToken.apns("pg-one")] == 1
                let counts = try await store.counts()
                return pushed && counts == QueueCounts(pending: 0, delivered: 1, dead: 0)
            }
            #expect(arrived, "\(server.logTail())")
        }
        // SIGTERM: the services stop, then the connection pool, and the process exits.
        #expect(await server.stop(), "\(server.logTail())")
    }

    /// Runs `herald ARGUMENTS` to its end; its exit status and standard output.
    static func herald(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ProgramRun.output(try ServerProcess.binary(), arguments)
    }

    @Test("herald keys creates, lists and revokes keys on PostgreSQL")
    func keys() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let created = try await Self.herald([
            "keys", "create", "--name", "ledger", "--scopes", "events", "--database", database.url,
        ])
        #expect(created.status == 0)
        let secret = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("hk_"))
        let listed = try await Self.herald(["keys", "list", "--database", database.url])
        #expect(listed.status == 0 && listed.output.contains("ledger"))
        try await Self.withReader(database) { store in
            let key = try #require(try await store.apiKey(secret: secret))
            #expect(key.name == "ledger" && key.scopes == [.events] && !key.isRevoked)
            let revoked = try await Self.herald(["keys", "revoke", key.id, "--database", database.url])
            #expect(revoked.status == 0)
            #expect(try await store.apiKey(secret: secret)?.isRevoked == true)
        }
    }

    @Test("two instances on one database: every job delivered once; a SIGKILLed one's jobs are sent by the other")
    func twoInstances() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let lease = ["--lease-seconds", "3"]
        let a = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + lease, database: database.url)
        let b = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + lease, database: database.url)
        try await Self.withReader(database) { store in
            // Both instances take webhooks at once; each job is sent exactly once.
            let first = (0..<200).map { TestToken.apns("pg-a-\($0)") }
            let acked = Mutex<[String]>([])
            await forEach(Array(first.enumerated()), width: 16) { index, token in
                if await Self.send(index.isMultiple(of: 2) ? a : b, token: token) {
                    acked.withLock { $0.append(token) }
                }
            }
            #expect(acked.withLock { $0.count } == first.count)
            let allArrived = try await eventually(timeout: .seconds(20)) {
                try await Self.pushes(store, tokens: first).values.allSatisfy { $0 >= 1 }
            }
            #expect(allArrived)
            let once = try await Self.pushes(store, tokens: first)
            #expect(once.values.allSatisfy { $0 == 1 }, "pushes sent more than once: \(once.filter { $0.value != 1 })")

            // A burst to both; one instance is killed halfway through its share.
            let second = (0..<300).map { TestToken.apns("pg-b-\($0)") }
            let ackedByA = Mutex(0)
            let confirmed = Mutex<[String]>([])
            let killedAt = Mutex<ContinuousClock.Instant?>(nil)
            await forEach(Array(second.enumerated()), width: 32) { index, token in
                let server = index.isMultiple(of: 2) ? a : b
                guard await Self.send(server, token: token) else { return }
                confirmed.withLock { $0.append(token) }
                if server === a,
                    ackedByA.withLock({
                        $0 += 1
                        return $0
                    }) == 60
                {
                    await a.crash()
                    killedAt.withLock { $0 = .now }
                }
            }
            let tokens = confirmed.withLock { $0 }
            #expect(killedAt.withLock { $0 } != nil)
            // Every acknowledged webhook is delivered: A's leased jobs by B, after the lease.
            let delivered = try await eventually(timeout: .seconds(40)) {
                let pending = try await store.pendingCount()
                return try await Self.pushes(store, tokens: tokens).values.allSatisfy { $0 >= 1 } && pending == 0
            }
            let took = killedAt.withLock { $0 }.map { ContinuousClock.now - $0 }
            let counts = try await Self.pushes(store, tokens: tokens)
            let missing = counts.filter { $0.value == 0 }.map(\.key)
            #expect(delivered, "\(missing.count) acknowledged webhooks never delivered; B:\n\(b.logTail())")
            let twice = counts.values.filter { $0 > 1 }.count
            // At-least-once: a push A sent but had not recorded as done when killed goes out again.
            print(
                "postgres e2e: \(tokens.count) acknowledged in the burst, all delivered \(took.map { "\($0)" } ?? "?") after the kill; \(twice) sent twice"
            )
        }
        await b.stop()
        await a.stop()
    }

    @Test(
        "two instances: an answer posted to one completes the request the other holds, through LISTEN/NOTIFY; a token rotated through one is used by both"
    )
    func crossInstance() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let a = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits, database: database.url)
        let b = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits, database: database.url)
        try await Self.withReader(database) { store in
            // A BOLT12 invoice request held by A; the device's answer goes to B.
            let offer = #"{"event":"invoice.request","data":{"offer":"lno1offer","invoiceRequest":"lnr1request"}}"#
            var latencies: [Duration] = []
            for round in 0..<5 {
                let token = TestToken.apns("pg-relay-\(round)")
                async let held = RawHTTP.exchange(
                    port: a.port, request: .post("/api/v1/notify?platform=ios&token=\(token)", body: Array(offer.utf8)),
                    timeout: .seconds(20)
                )
                var replyPath: String?
                _ = try await eventually(timeout: .seconds(10)) {
                    guard let push = try await store.localPushes(platform: .ios, token: token, after: 0, limit: 1).first,
                        let json = try JSONSerialization.jsonObject(with: push.payload) as? [String: Any],
                        let inner = json["notification_payload"] as? String,
                        let payload = try JSONSerialization.jsonObject(with: Data(inner.utf8)) as? [String: Any],
                        let url = payload["reply_url"] as? String, let path = url.range(of: "/api/v1/reply/")
                    else { return false }
                    replyPath = String(url[path.lowerBound...])
                    return true
                }
                let path = try #require(replyPath, "no push with a reply_url; A:\n\(a.logTail())")
                let answer = #"{"invoice":"lni1answer\#(round)"}"#
                let posted = await RawHTTP.exchange(port: b.port, request: .post(path, body: Array(answer.utf8)), timeout: .seconds(10))
                let answeredAt = ContinuousClock.now
                #expect(posted.statuses.first == 200, "\(posted)")
                let response = await held
                latencies.append(ContinuousClock.now - answeredAt)
                #expect(response.statuses.first == 200, "\(response)")
                #expect(response.bodies.first == answer)
            }
            // The poll is every second: well under it, the notification carried the answer.
            let slowest = latencies.max() ?? .zero
            print("postgres cross-instance reply: answer at B to response from A, \(latencies.map { "\($0)" })")
            #expect(slowest < .milliseconds(500), "\(latencies)")

            // A device registered through A rotates its token through B; a webhook to A then
            // reaches the new token only.
            let device = try await RegisteredDevice.register(port: a.port, platform: "ios", token: TestToken.apns("pg-old-token"))
            let rotated = await RawHTTP.exchange(
                port: b.port,
                request: .method(
                    "PUT", "/api/v1/devices/\(device.id)", body: Array(#"{"push_token":"\#(TestToken.apns("pg-new-token"))"}"#.utf8),
                    headers: ["Content-Type: application/json", "Authorization: Bearer \(device.secret)"]
                ),
                timeout: .seconds(10)
            )
            #expect(rotated.statuses.first == 200, "\(rotated)")
            for server in [a, b] {
                let sent = await RawHTTP.exchange(
                    port: server.port, request: .post(device.webhookPath, body: swapWebhook(id: "rotated")), timeout: .seconds(10))
                #expect(sent.statuses.first == 200, "\(sent)")
            }
            let arrived = try await eventually(timeout: .seconds(15)) {
                try await Self.pushes(store, tokens: [TestToken.apns("pg-new-token")])[TestToken.apns("pg-new-token")] == 2
            }
            #expect(arrived)
            #expect(try await Self.pushes(store, tokens: [TestToken.apns("pg-old-token")])[TestToken.apns("pg-old-token")] == 0)
        }
        await b.stop()
        await a.stop()
    }

    @Test("two instances allow one device its burst once between them: 429 target_rate_limited past it")
    func sharedRateLimit() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let limits = ["--target-pushes-per-minute", "1", "--target-push-burst", "6"]
        let a = try ServerProcess(arguments: ServerProcess.liftedTargetLimits + limits, database: database.url)
        let b = try ServerProcess(arguments: ServerProcess.liftedTargetLimits + limits, database: database.url)
        let healthy = await a.waitUntilHealthy()
        #expect(healthy)
        #expect(await b.waitUntilHealthy())
        let statuses = Mutex<[Int]>([])
        await forEach(Array(0..<24), width: 8) { index in
            let exchange = await RawHTTP.exchange(
                port: (index.isMultiple(of: 2) ? a : b).port,
                request: .post("/api/v1/notify?platform=ios&token=70672d6c696d69746564", body: swapWebhook(id: "l\(index)")),
                timeout: .seconds(10))
            statuses.withLock { $0.append(exchange.statuses.first ?? 0) }
        }
        let seen = statuses.withLock { $0 }
        #expect(seen.filter { $0 == 200 }.count == 6, "\(seen)")
        #expect(seen.filter { $0 == 429 }.count == 18, "\(seen)")
        await b.stop()
        await a.stop()
    }

    @Test(
        "two instances share presence: a heartbeat or stream at one stops pushes from the other, wakes reach a stream held elsewhere, one wake is claimed once"
    )
    func sharedPresence() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        let a = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits, database: database.url)
        let b = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits, database: database.url)
        let created = try await Self.herald(["keys", "create", "--name", "lsp", "--scopes", "wake", "--database", database.url])
        let key = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let hash = String(repeating: "ab", count: 32)
        @Sendable func wake(_ server: ServerProcess, _ device: RegisteredDevice, hash: String) async -> RawHTTP.Exchange {
            await RawHTTP.exchange(
                port: server.port,
                request: .post(
                    "/api/v1/wake", body: Array(#"{"device":"\#(device.id)","kind":"incomingHtlc","payment_hash":"\#(hash)"}"#.utf8),
                    headers: ["Content-Type: application/json", "Authorization: Bearer \(key)"]),
                timeout: .seconds(10))
        }
        func hint(_ server: ServerProcess, _ device: RegisteredDevice) async -> String {
            let exchange = await RawHTTP.exchange(
                port: server.port,
                request: .get("/api/v1/forwarding_hint?recipient=\(device.id)", headers: ["Authorization: Bearer \(key)"]),
                timeout: .seconds(10))
            return exchange.bodies.first ?? ""
        }

        // A heartbeat at A: a wake at B is not pushed.
        let beating = try await RegisteredDevice.register(port: a.port, platform: "ios", token: TestToken.apns("pg-beat"))
        let beat = await RawHTTP.exchange(
            port: a.port,
            request: .post(
                "/api/v1/devices/\(beating.id)/presence", body: Array(#"{"ttl_seconds":30}"#.utf8),
                headers: ["Content-Type: application/json", "Authorization: Bearer \(beating.secret)"]),
            timeout: .seconds(10))
        #expect(beat.statuses.first == 200, "\(beat)")
        let presentAtB = try await eventually(timeout: .seconds(5)) {
            await wake(b, beating, hash: hash).bodies.first?.contains(#""reason":"present""#) == true
        }
        #expect(presentAtB, "B:\n\(b.logTail())")

        // A stream held at A: a wake at B is told on it, and not pushed.
        let streaming = try await RegisteredDevice.register(port: a.port, platform: "ios", token: TestToken.apns("pg-stream"))
        let stream = try await RawConnection.open(port: a.port)
        defer { stream.close() }
        try await stream.write(
            Array(
                RawHTTP.Request.head(
                    "GET", "/api/v1/devices/\(streaming.id)/presence/stream", headers: ["Authorization: Bearer \(streaming.secret)"]
                ).utf8))
        let toldAtB = try await eventually(timeout: .seconds(5)) {
            await wake(b, streaming, hash: hash).bodies.first?.contains(#""reason":"present""#) == true
        }
        #expect(toldAtB)
        _ = await stream.read(responses: nil, timeout: .seconds(2))
        let received = String(decoding: stream.received, as: UTF8.self)
        #expect(received.contains("event: wake") && received.contains(hash), "\(received)")

        // An away device: wakes for one payment sent to both at once are pushed once, and the
        // other instance's hint knows it is being woken.
        let away = try await RegisteredDevice.register(port: a.port, platform: "ios", token: TestToken.apns("pg-away"))
        let answers = Mutex<[Int]>([])
        await forEach(Array(0..<20), width: 20) { index in
            let exchange = await wake(index.isMultiple(of: 2) ? a : b, away, hash: String(repeating: "cd", count: 32))
            answers.withLock { $0.append(exchange.statuses.first ?? 0) }
        }
        let statuses = answers.withLock { $0 }
        #expect(statuses.filter { $0 == 202 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 200 }.count == 19, "\(statuses)")
        try await Self.withReader(database) { store in
            let pushed = try await eventually(timeout: .seconds(10)) {
                try await Self.pushes(store, tokens: [TestToken.apns("pg-away")])[TestToken.apns("pg-away")] == 2
            }
            #expect(pushed)
        }
        let waking = try await eventually(timeout: .seconds(5)) {
            let a = await hint(a, away)
            let b = await hint(b, away)
            return a.contains(#""reason":"waking""#) && b.contains(#""reason":"waking""#)
        }
        let hints = (await hint(a, away), await hint(b, away))
        #expect(waking, "\(hints)")
        await b.stop()
        await a.stop()
    }
}
