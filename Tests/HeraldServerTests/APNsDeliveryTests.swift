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

    func router(baseURL: String, httpClient: PushHTTPClient) throws -> PushRouter {
        let configuration = APNsConfiguration(
            signingKeyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID,
            topic: Self.topic, environment: .custom(baseURL)
        )
        return PushRouter(ios: try APNsProvider(configuration: configuration, httpClient: httpClient), android: nil)
    }

    /// Runs `body` with a mock APNs, an HTTP client trusting its CA, and providers pointing at it.
    func withAPNs(
        _ body: (MockAPNsServer, PushRouter) async throws -> Void
    ) async throws {
        let mock = MockAPNsServer(key: key, topic: Self.topic, certificate: certificate)
        let httpClient = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile))
        do {
            try await mock.withRunning { running in
                try await body(mock, try router(baseURL: running.baseURL, httpClient: httpClient))
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
                #expect(try await nds.eventually { try await nds.store.status(jobID: id)?.state == .delivered })
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
                #expect(try await nds.eventually { try await nds.store.status(jobID: id)?.state == .dead })
                #expect(try await nds.store.isDead(platform: .ios, token: token))

                let second = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                #expect(second.status == .gone)
                #expect(second.json["error"] as? String == "token_unregistered")
                try await Task.sleep(for: .milliseconds(200))
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
                #expect(try await nds.eventually { try await nds.store.status(jobID: id)?.state == .delivered })
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
                #expect(try await nds.eventually { try await nds.store.status(jobID: id)?.state == .dead })
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
                #expect(try await nds.eventually { try await nds.store.status(jobID: id)?.state == .dead })
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
            #expect(try await first.eventually { try await first.store.status(jobID: id)?.attempts ?? 0 >= 1 })
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
                #expect(try await second.eventually { try await second.store.status(jobID: id)?.state == .delivered })
            }
        }
    }
}
