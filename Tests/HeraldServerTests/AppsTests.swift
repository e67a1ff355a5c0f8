import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Two apps with their own APNs keys and topics in one process, as a configuration file with
/// `apps` makes them: every route that pushes uses the credentials of its target's app.
@Suite("Several apps in one process")
struct AppsTests {
    static let wallet = "com.example.wallet"
    static let brand = "com.other.brand"
    static let swap = #"{"event":"swap.update","data":{"id":"s1","status":"transaction.mempool"}}"#

    /// Runs `body` with the APNs look-alike trusting two keys, each for its own topic, and a
    /// router with one APNs provider per app (no `default` app).
    func withTwoApps(_ body: (MockAPNsServer, PushRouter) async throws -> Void) async throws {
        let certificate = try TestCertificate.make()
        let walletKey = TestKeys.apnsP8(keyID: "WALLETKEY1", teamID: "TEAMWALLET")
        let brandKey = TestKeys.apnsP8(keyID: "BRANDKEY01", teamID: "TEAMBRAND1")
        let mock = MockAPNsServer(
            credentials: [.init(key: walletKey, topics: [Self.wallet]), .init(key: brandKey, topics: [Self.brand])],
            certificate: certificate)
        try await mock.withRunning { running in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            let client = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile))
            func apns(_ key: APNsTestKey, _ topic: String) throws -> APNsProvider {
                try APNsProvider(
                    configuration: APNsConfiguration(
                        signingKeyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID, topic: topic,
                        environment: .custom(running.baseURL)),
                    httpClient: client)
            }
            do {
                let router = PushRouter(apps: [
                    Self.wallet: .init(ios: try apns(walletKey, Self.wallet), android: nil),
                    Self.brand: .init(ios: try apns(brandKey, Self.brand), android: nil),
                ])
                try await body(mock, router)
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }
    }

    @Test("a dead letter of a named app, replayed, is sent with that app's topic and key")
    func replayKeepsTheApp() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        try await withTwoApps { mock, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let token = String(repeating: "c3", count: 32)
                let registered = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(token)","app":"\#(Self.brand)"}"#)
                let alias = try #require(registered.json["alias"] as? String)
                // APNs refuses the first push for good: a dead letter.
                await mock.script.enqueue([MockAPNsAnswer(status: 400, reason: "BadPayload")], for: token)
                #expect(try await client.post("/api/v1/notify?token=\(alias)", json: Self.swap).status == .ok)
                var letters: [Any] = []
                #expect(
                    try await eventually {
                        letters = try await client.call(.get, "/api/v1/admin/dead-letters", key: admin).json["dead_letters"] as? [Any] ?? []
                        return letters.count == 1
                    })
                let id = try #require((letters.first as? [String: Any])?["id"] as? String)
                #expect(try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin).status == .created)
                let requests = try await mock.requests.waitFor(count: 2)
                for request in requests {
                    #expect(request.headers["apns-topic"] == Self.brand)
                    #expect(request.claims?.keyID == "BRANDKEY01")
                }
                #expect(requests.last?.accepted == true)
            }
        }
    }

    @Test("devices and backend sessions of two apps: each push has its app's topic and its key's token")
    func devicesAndSessions() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await withTwoApps { mock, providers in
            try await nds.app(providers: providers).test(.router) { client in
                let walletToken = String(repeating: "a1", count: 32)
                let brandToken = String(repeating: "b2", count: 32)
                // Registration: the app named, one not configured, and none (no `default` here).
                let registered = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(walletToken)","app":"\#(Self.wallet)"}"#)
                #expect(registered.status == .created)
                #expect(registered.json["app"] as? String == Self.wallet)
                let alias = try #require(registered.json["alias"] as? String)
                for body in [
                    #"{"platform":"ios","push_token":"\#(walletToken)","app":"com.nope"}"#, #"{"platform":"ios","push_token":"\#(walletToken)"}"#,
                ] {
                    let refused = try await client.post("/api/v1/devices", json: body)
                    #expect(refused.status == .badRequest)
                    #expect(refused.json["error"] as? String == "unknown_app")
                }

                // A backend session of the other app, and one naming no configured app.
                let session = try await client.call(
                    .put, "/api/v1/users/u1/sessions/phone", key: key,
                    json: #"{"allow_notifications":true,"platform":"ios","push_token":"\#(brandToken)","app":"\#(Self.brand)"}"#)
                #expect(session.status == .created)
                #expect(session.json["app"] as? String == Self.brand)
                let badSession = try await client.call(
                    .put, "/api/v1/users/u1/sessions/other", key: key,
                    json: #"{"allow_notifications":true,"platform":"ios","push_token":"\#(brandToken)","app":"com.nope"}"#)
                #expect(badSession.status == .badRequest)
                #expect(badSession.json["error"] as? String == "unknown_app")

                #expect(try await client.post("/api/v1/notify?token=\(alias)", json: Self.swap).status == .ok)
                #expect(try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived).status == .ok)
                #expect(
                    try await client.post(
                        "/api/v1/notify?platform=ios&token=\(brandToken)&app=\(Self.brand)", json: Self.swap
                    ).status == .ok)

                _ = try await mock.requests.waitFor(count: 3)
                // One job per push, all delivered and none pending: no other push can still come.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 3, dead: 0) })
                let requests = await mock.requests.all
                #expect(requests.count == 3)
                for request in requests {
                    let app = request.deviceToken == walletToken ? Self.wallet : Self.brand
                    #expect(request.accepted, "\(request.answer)")
                    #expect(request.headers["apns-topic"] == app)
                    #expect(request.claims?.keyID == (app == Self.wallet ? "WALLETKEY1" : "BRANDKEY01"))
                }
                #expect(requests.filter { $0.deviceToken == brandToken }.count == 2)
            }
        }
    }
}
