import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Webhook → outbox → APNs provider → the local APNs look-alike over HTTP/2 + TLS.
@Suite("Delivery to APNs")
struct APNsDeliveryTests {
    static let topic = "org.herald.wallet"
    let key = TestKeys.apnsP8()
    let certificate: TestCertificate
    let caFile: String

    init() throws {
        certificate = try TestCertificate.make()
        caFile = try certificate.writeCAToTemporaryFile()
    }

    func router(baseURL: String, httpClient: PushHTTPClient, requestTimeout: Duration = .seconds(30)) throws -> PushRouter {
        let configuration = APNsConfiguration(
            signingKeyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID,
            topic: Self.topic, environment: .custom(baseURL), requestTimeout: requestTimeout
        )
        return PushRouter(ios: try APNsProvider(configuration: configuration, httpClient: httpClient), android: nil)
    }

    /// Runs `body` with a mock APNs, an HTTP client trusting its CA, and providers pointing at it.
    func withAPNs(
        responseDelay: Duration? = nil,
        requestTimeout: Duration = .seconds(30),
        _ body: (MockAPNsServer, PushRouter) async throws -> Void
    ) async throws {
        let mock = MockAPNsServer(key: key, topic: Self.topic, certificate: certificate, responseDelay: responseDelay)
        let httpClient = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile))
        do {
            try await mock.withRunning { running in
                try await body(mock, try router(baseURL: running.baseURL, httpClient: httpClient, requestTimeout: requestTimeout))
            }
        } catch {
            await httpClient.shutdown()
            throw error
        }
        await httpClient.shutdown()
    }

    static let swap = #"{"event":"swap.update","data":{"id":"swap-9","status":"transaction.claim.pending"}}"#

    @Test("a webhook reaches APNs as an alert push with the Breez data beside aps")
    func delivered() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "0f", count: 32)
        try await withAPNs { mock, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)&app_data=a1", json: Self.swap)
                #expect(response.status == .ok)
                let request = try #require(try await mock.requests.waitFor(count: 1).first)
                #expect(request.deviceToken == token)
                #expect(request.headers["apns-topic"] == Self.topic)
                #expect(request.headers["apns-push-type"] == "alert")
                #expect(request.headers["apns-priority"] == "10")
                #expect(request.headers["apns-collapse-id"] == "swap:swap-9")
                #expect(Int(request.headers["apns-expiration"] ?? "") ?? 0 > Int(Date().timeIntervalSince1970))
                #expect(request.claims?.issuer == key.teamID)
                #expect(request.claims?.keyID == key.keyID)
                let json = try #require(request.json)
                #expect(json["notification_type"] as? String == "swap_updated")
                #expect(json["notification_payload"] as? String == #"{"id":"swap-9","status":"transaction.claim.pending"}"#)
                #expect(json["app_data"] as? String == "a1")
                let aps = try #require(json["aps"] as? [String: Any])
                #expect(aps["mutable-content"] as? Int == 1)
                let id = try #require(response.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .delivered })
            }
        }
    }

    @Test("every other push collapses by its job id, so a resend after a crash replaces the first on the phone")
    func collapsesByJobID() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "0e", count: 32)
        try await withAPNs { mock, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.post(
                    "/api/v1/notify?platform=ios&token=\(token)", json: #"{"event":"wallet.custom","data":{"n":1}}"#
                )
                #expect(response.status == .ok)
                let id = try #require(response.json["id"] as? String)
                let request = try #require(try await mock.requests.waitFor(count: 1).first)
                #expect(request.headers["apns-collapse-id"] == "job:" + id)
            }
        }
    }

    @Test(
        "a token APNs calls dead is never pushed again and its webhooks get 410",
        arguments: [MockAPNsAnswer.unregistered, MockAPNsAnswer.badDeviceToken]
    )
    func deadToken(_ answer: MockAPNsAnswer) async throws {
        let nds = try TestNDS()
        let token = String(repeating: "de", count: 32)
        try await withAPNs { mock, providers in
            await mock.script.always(answer, for: token)
            try await nds.app(providers: providers).test(.live) { client in
                let first = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(first.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .dead })
                #expect(try await nds.store.isDead(platform: .ios, token: token))

                let second = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                #expect(second.status == .gone)
                #expect(second.json["error"] as? String == "token_unregistered")
                // Nothing was enqueued for it, so nothing can reach APNs later: no wait proves that.
                #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 1))
                #expect(await mock.requests.count == 1)
            }
        }
    }

    @Test("429 and 503 answers are retried until APNs accepts")
    func retries() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "7e", count: 32)
        try await withAPNs { mock, providers in
            await mock.script.enqueue(
                [.tooManyRequests(retryAfter: nil), .serviceUnavailable(retryAfter: nil), .success], for: token
            )
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(response.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .delivered })
                #expect(try await nds.store.status(jobID: id)?.attempts == 3)
                #expect(await mock.requests.count == 3)
            }
        }
    }

    @Test("a job APNs keeps refusing with 503 is dead-lettered once its TTL has passed")
    func retriesUntilTTL() async throws {
        let nds = try TestNDS(jobTTL: .seconds(1))
        let token = String(repeating: "3b", count: 32)
        try await withAPNs { mock, providers in
            await mock.script.always(.serviceUnavailable(retryAfter: nil), for: token)
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(response.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .dead })
                let status = try await nds.store.status(jobID: id)
                #expect(status?.lastError?.hasPrefix("ttl_expired") == true)
                #expect((status?.attempts ?? 0) >= 2)
                #expect(try await nds.store.isDead(platform: .ios, token: token) == false)
            }
        }
    }

    @Test("a permanent APNs refusal dead-letters the job with its reason")
    func permanent() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "9a", count: 32)
        try await withAPNs { mock, providers in
            await mock.script.always(.payloadTooLarge, for: token)
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(response.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .dead })
                let status = try await nds.store.status(jobID: id)
                #expect(status?.lastError?.contains("PayloadTooLarge") == true)
                #expect(try await nds.store.isDead(platform: .ios, token: token) == false)
            }
        }
    }

    @Test("a job accepted while APNs is unreachable is sent after a restart")
    func restartResumes() async throws {
        let first = try TestNDS()
        let token = String(repeating: "5c", count: 32)
        // A refused connection is retried by the pool until the connect timeout: keep it short
        // so the first attempt is over well within `eventually`'s ten seconds.
        let httpClient = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile, connectTimeout: .seconds(1)))
        // Nothing listens on port 9 of 127.0.0.1: every send fails to connect and is retried.
        let unreachable = try router(baseURL: "https://127.0.0.1:9", httpClient: httpClient)
        let id: String = try await first.app(providers: unreachable).test(.live) { client in
            let response = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
            #expect(response.status == .ok)
            let id = try #require(response.json["id"] as? String)
            #expect(try await eventually { try await first.store.status(jobID: id)?.attempts ?? 0 >= 1 })
            return id
        }
        await httpClient.shutdown()
        #expect(try await first.store.status(jobID: id)?.state == .pending)

        // The same database file, a new process-worth of store, app and providers.
        let second = try TestNDS(folder: first.folder)
        try await withAPNs { mock, providers in
            try await second.app(providers: providers).test(.live) { _ in
                let request = try #require(try await mock.requests.waitFor(count: 1, timeout: .seconds(15)).first)
                #expect(request.deviceToken == token)
                #expect(try await eventually { try await second.store.status(jobID: id)?.state == .delivered })
            }
        }
    }

    @Test(
        "a burst far past the dispatcher's memory bound while APNs refuses is all acknowledged, never held in memory past the bound, and delivered exactly once when APNs recovers"
    )
    func boundedBurst() async throws {
        let burst = 2_000
        let bound = 64
        var configured = try TestNDS()
        configured.dispatcher.maxJobsInMemory = bound
        configured.dispatcher.maxAttempts = 1_000  // the outage must not dead-letter them
        configured.settings.targetPushesPerMinute = 1_000_000  // a few phones take the whole burst
        configured.settings.targetPushBurst = 1_000_000
        let nds = configured
        let tokens = (0..<8).map { String(repeating: String(format: "%02x", 0xb0 + $0), count: 32) }
        let metrics = HeraldMetrics()
        try await withAPNs { mock, providers in
            for token in tokens { await mock.script.always(.serviceUnavailable(retryAfter: 1), for: token) }
            try await nds.app(providers: providers, metrics: metrics).test(.router) { client in
                let acknowledged = try await withThrowingTaskGroup(of: String?.self) { group in
                    func post(_ n: Int) {
                        group.addTask {
                            let response = try await client.post(
                                "/api/v1/notify?platform=ios&token=\(tokens[n % tokens.count])",
                                json: #"{"event":"wallet.custom","data":{"n":\#(n)}}"#
                            )
                            return response.status == .ok ? response.json["id"] as? String : nil
                        }
                    }
                    for n in 0..<32 { post(n) }
                    var next = 32
                    var ids: [String] = []
                    for try await id in group {
                        if let id { ids.append(id) }
                        if next < burst {
                            post(next)
                            next += 1
                        }
                    }
                    return ids
                }
                #expect(acknowledged.count == burst)
                #expect(await mock.requests.all.contains { $0.answer.status == 503 })

                for token in tokens { await mock.script.clear(token) }
                #expect(try await eventually(timeout: .seconds(120)) { try await nds.store.counts().delivered == burst })
                #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: burst, dead: 0))
                // Every job reached APNs once with a 200: its collapse id is its job id.
                let delivered = await mock.requests.all.filter(\.accepted).compactMap { $0.headers["apns-collapse-id"] }
                #expect(delivered.count == burst)
                #expect(Set(delivered) == Set(acknowledged.map { "job:" + $0 }))

                let peak = try #require(Self.gauge("herald_outbox_in_memory_peak", in: metrics.render()))
                #expect(peak > 0 && peak <= Double(bound))
            }
        }
    }

    @Test("a job held in memory until its lease ran out is not sent under it; once given back it is sent, once")
    func leaseRunsOutInMemory() async throws {
        var configured = try TestNDS()
        configured.dispatcher.maxConcurrentSends = 1  // the second job waits in memory behind the first
        configured.dispatcher.safetyPollInterval = .seconds(1)  // finds the job given back below
        let nds = configured
        let clock = TestClock()
        let metrics = HeraldMetrics()
        let first = String(repeating: "1a", count: 32)
        let second = String(repeating: "2b", count: 32)
        // Each answer takes a second: time for the test to move the clock past the leases.
        try await withAPNs(responseDelay: .seconds(1)) { mock, providers in
            try await nds.app(providers: providers, metrics: metrics, now: clock.function).test(.router) { client in
                let a = try await client.post("/api/v1/notify?platform=ios&token=\(first)", json: #"{"event":"wallet.custom","data":{}}"#)
                let b = try await client.post("/api/v1/notify?platform=ios&token=\(second)", json: #"{"event":"wallet.custom","data":{}}"#)
                let firstID = try #require(a.json["id"] as? String)
                let secondID = try #require(b.json["id"] as? String)
                _ = try await mock.requests.waitFor(count: 1)  // the first is being sent
                clock.advance(by: nds.dispatcher.lease + .seconds(1))

                // Another process takes the second job, as its run-out lease allows.
                let taken = try await nds.store.claimDue(now: clock.now, leaseUntil: clock.now.addingTimeInterval(60), limit: 10)
                #expect(taken.map(\.id).contains(secondID))
                // The first is delivered; the dispatcher lets the second go unsent.
                #expect(
                    try await eventually {
                        try await nds.store.status(jobID: firstID)?.state == .delivered
                            && Self.gauge("herald_outbox_in_memory", in: metrics.render()) == 0
                    }
                )
                #expect(await mock.requests.all.map(\.deviceToken) == [first])

                // The other process gives it back: it is claimed again and sent, once.
                try await nds.store.release(jobIDs: [secondID])
                #expect(try await eventually { try await nds.store.status(jobID: secondID)?.state == .delivered })
                #expect(await mock.requests.all.map(\.deviceToken) == [first, second])
                #expect(try await nds.store.status(jobID: secondID)?.attempts == 1)
            }
        }
    }

    /// A gauge's value in Prometheus text.
    static func gauge(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }
}
