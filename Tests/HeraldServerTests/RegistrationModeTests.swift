import Foundation
import HTTPTypes
import HeraldDevice
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// `registration`: who may point an alias at a push token. `accept_raw_tokens: false` alone is
/// not "no open push relay" while anyone registers any token.
@Suite("Registration modes")
struct RegistrationModeTests {
    static let swap = #"{"event":"swap.update","data":{"id":"s1","status":"transaction.mempool"}}"#

    @Test("key: registration needs an API key of scope devices (or admin); without one 401, with another scope 403")
    func key() async throws {
        var configured = try TestNDS(acceptRawTokens: false)
        configured.settings.registration = .key
        let nds = configured
        let devices = try await nds.apiKey([.devices])
        let wake = try await nds.apiKey([.wake])
        let body = #"{"platform":"ios","push_token":"\#(String(repeating: "4b", count: 32))"}"#
        try await nds.app().test(.router) { client in
            let anonymous = try await client.post("/api/v1/devices", json: body)
            #expect(anonymous.status == .unauthorized)
            let wrongScope = try await client.post("/api/v1/devices", json: body, headers: [.authorization: "Bearer \(wake)"])
            #expect(wrongScope.status == .forbidden)
            #expect(try await nds.store.counts().pending == 0)
            let made = try await client.post("/api/v1/devices", json: body, headers: [.authorization: "Bearer \(devices)"])
            #expect(made.status == .created, "\(made.text)")
        }
    }

    @Test("challenge: an alias pushes nothing but its one-time code until the code comes back; the plugin posts it by itself")
    func challenge() async throws {
        var configured = try TestNDS(acceptRawTokens: false)
        configured.settings.registration = .challenge
        let nds = configured
        let victim = String(repeating: "5c", count: 32)
        let phone = TestPhone(nds: nds, platform: .ios, token: victim)
        try await nds.app().test(.router) { client in
            // Someone registers a token that is not theirs: the alias is made, but reaches nothing.
            let made = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(victim)"}"#)
            #expect(made.status == .created)
            // The answer says the alias is not live yet.
            #expect(made.json["confirmed"] as? Bool == false)
            let alias = try #require(made.json["alias"] as? String)
            let deviceID = try #require(made.json["device_id"] as? String)
            let refused = try await client.post("/api/v1/notify?token=\(alias)", json: Self.swap)
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.json["error"] as? String == "device_unconfirmed")
            let guessed = try await client.post("/api/v1/devices/\(deviceID)/confirm", json: #"{"code":"not-it"}"#)
            #expect(guessed.status == .forbidden)
            #expect(guessed.json["error"] as? String == "invalid_code")

            // The token's real holder got exactly one push: the challenge.
            let pushes = try await phone.pushes(after: 0)
            #expect(pushes.map(\.type) == ["herald_challenge"])
            let stored = try #require(try await nds.store.localPushes(platform: .ios, token: victim, after: 0, limit: 10).first)
            let incoming = IncomingPush(json: stored.payload)
            guard case .deviceChallenge(let challenge) = incoming.notification else {
                Issue.record("not a challenge: \(incoming.notification)")
                return
            }
            #expect(challenge.confirmURL == "http://nds.test/api/v1/devices/\(deviceID)/confirm")
            // What the plugin posts, to the path of the URL it was given.
            let confirmed = try await client.post(
                String(challenge.confirmURL.dropFirst("http://nds.test".count)),
                json: String(decoding: try WireJSON.encode(DeviceConfirmation(code: challenge.code)), as: UTF8.self))
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            let pushed = try await client.post("/api/v1/notify?token=\(alias)", json: Self.swap)
            #expect(pushed.status == .ok, "\(pushed.text)")
            #expect(try await eventually { try await phone.pushes(after: 0).count == 2 })
            #expect(try await phone.pushes(after: 0).map(\.type) == ["herald_challenge", "swap_updated"])
        }
    }

    @Test("a platform no provider serves is refused at registration and PUT, as the webhook would refuse every call")
    func platformNotConfigured() async throws {
        let nds = try WebPushDeliveryTests.nds()
        try await WebPushDeliveryTests.withMocks { _, _, providers in
            // FCM and Web Push only.
            try await nds.app(providers: providers).test(.router) { client in
                let ios = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(String(repeating: "1a", count: 32))"}"#)
                #expect(ios.status == .badRequest, "\(ios.text)")
                #expect(ios.json["error"] as? String == "platform_not_configured")
                let android = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-ok"}"#)
                #expect(android.status == .created)
                let id = try #require(android.json["device_id"] as? String)
                let secret = try #require(android.json["device_secret"] as? String)
                let moved = try await client.execute(
                    uri: "/api/v1/devices/\(id)", method: .put, headers: [.authorization: "Bearer \(secret)", .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"platform":"ios","push_token":"\#(String(repeating: "1a", count: 32))"}"#))
                #expect(moved.status == .badRequest)
                #expect(moved.json["error"] as? String == "platform_not_configured")
            }
        }
    }

    @Test("PUT changes only what it names: an LSP node id alone, as the LSPS5 set-up says; nothing named is 422")
    func partialUpdate() async throws {
        let nds = try TestNDS()
        let node = "02" + "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        try await nds.app().test(.router) { client in
            let made = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-partial"}"#)
            let id = try #require(made.json["device_id"] as? String)
            let secret = try #require(made.json["device_secret"] as? String)
            func put(_ body: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/v1/devices/\(id)", method: .put, headers: [.authorization: "Bearer \(secret)", .contentType: "application/json"],
                    body: ByteBuffer(string: body))
            }
            let set = try await put(#"{"lsp_node_id":"\#(node)"}"#)
            #expect(set.status == .ok, "\(set.text)")
            #expect(set.json["lsp_node_id"] as? String == node)
            #expect(try await nds.store.lspNodeID(deviceID: id) == node)
            #expect(try await nds.store.device(alias: try #require(made.json["alias"] as? String))?.token == "fcm-partial")
            let empty = try await put("{}")
            #expect(empty.status == .unprocessableContent)
            #expect(empty.json["error"] as? String == "invalid_body")
        }
    }

    @Test("the local provider's feed is the first device's with a token: one registered after it with the same token reads nothing")
    func feedOwner() async throws {
        let nds = try TestNDS()
        let token = String(repeating: "6f", count: 32)
        try await nds.app().test(.router) { client in
            var secrets: [(String, String)] = []
            for _ in 0..<2 {
                let made = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(token)"}"#)
                secrets.append((try #require(made.json["device_id"] as? String), try #require(made.json["device_secret"] as? String)))
            }
            let owner = try await client.execute(
                uri: "/api/v1/devices/\(secrets[0].0)/pushes", method: .get, headers: [.authorization: "Bearer \(secrets[0].1)"])
            #expect(owner.status == .ok)
            let squatter = try await client.execute(
                uri: "/api/v1/devices/\(secrets[1].0)/pushes", method: .get, headers: [.authorization: "Bearer \(secrets[1].1)"])
            #expect(squatter.status == .forbidden)
            #expect(squatter.json["error"] as? String == "token_registered_elsewhere")
        }
    }

    @Test("open: the default, as before")
    func open() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        #expect(nds.settings.registration == .open)
        try await nds.app().test(.router) { client in
            let made = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-open"}"#)
            let alias = try #require(made.json["alias"] as? String)
            #expect(try await client.post("/api/v1/notify?token=\(alias)", json: Self.swap).status == .ok)
        }
    }
}
