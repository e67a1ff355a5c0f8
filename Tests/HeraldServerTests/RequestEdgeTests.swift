import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import Hummingbird
import HummingbirdTesting
import Testing

/// Every route reads bodies, credentials and shared fields through one edge, so the same fault
/// gets the same answer wherever a client makes it.
@Suite("One request edge")
struct RequestEdgeTests {
    static let webhook = #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#

    @Test("an empty body is 400 invalid_json with one message on every route that needs one")
    func emptyBody() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.app().test(.router) { client in
            let answers = [
                try await client.post("/api/v1/notify?platform=ios&token=74", json: ""),
                try await client.post("/api/v1/devices", json: ""),
                try await client.post("/api/v1/reply/some-id", json: ""),
                try await client.call(.put, "/api/v1/users/u1/sessions/s1", key: key, json: ""),
                try await client.call(.post, "/api/v1/users/u1/events", key: key, json: ""),
            ]
            for answer in answers {
                #expect(answer.status == .badRequest)
                #expect(answer.json["error"] as? String == "invalid_json")
                #expect(answer.json["message"] as? String == "the body is empty; expected a JSON object")
            }
        }
    }

    @Test("wrong fields are 422 invalid_body naming the field, on device and backend routes alike")
    func wrongFields() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.app().test(.router) { client in
            let device = try await client.post("/api/v1/devices", json: #"{"platform":"ios"}"#)
            let session = try await client.call(
                .put, "/api/v1/users/u1/sessions/s1", key: key, json: #"{"allow_notifications":true}"#
            )
            #expect(device.status == .unprocessableContent)
            #expect(device.json["error"] as? String == "invalid_body")
            #expect(device.json["message"] as? String == "the field 'push_token' is required")
            #expect(session.status == .unprocessableContent)
            #expect(session.json["message"] as? String == "the field 'platform' is required")
        }
    }

    @Test("an unknown platform is refused the same way by the webhook, devices and sessions")
    func unknownPlatform() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.app().test(.router) { client in
            let answers = [
                try await client.post("/api/v1/notify?platform=windows&token=74", json: Self.webhook),
                try await client.post("/api/v1/devices", json: #"{"platform":"windows","push_token":"74"}"#),
                try await client.call(
                    .put, "/api/v1/users/u1/sessions/s1", key: key, json: Seed002.login(platform: "windows", token: "74")
                ),
            ]
            for answer in answers {
                #expect(answer.status == .badRequest)
                #expect(answer.json["error"] as? String == "unknown_platform")
                #expect(answer.json["message"] as? String == "platform must be 'ios', 'android' or 'webpush', not 'windows'")
            }
        }
    }

    @Test("a push token over 4096 bytes is 400 invalid_token on the webhook and on registration")
    func longToken() async throws {
        let nds = try TestNDS()
        let long = String(repeating: "a", count: PushTarget.maximumTokenBytes + 1)
        try await nds.app().test(.router) { client in
            let webhook = try await client.post("/api/v1/notify?platform=ios&token=\(long)", json: Self.webhook)
            let device = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(long)"}"#)
            #expect(webhook.status == .badRequest)
            #expect(webhook.json["error"] as? String == "invalid_token")
            #expect(webhook.json["message"] as? String == "token must be 1 to 4096 bytes")
            #expect(device.status == .badRequest)
            #expect(device.json["message"] as? String == "push_token must be 1 to 4096 bytes")
        }
    }

    @Test("an Idempotency-Key over 255 bytes is refused by the webhook and by backend events")
    func longIdempotencyKey() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        let headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: String(repeating: "k", count: 256)]
        try await nds.app().test(.router) { client in
            let answers = [
                try await client.post("/api/v1/notify?platform=ios&token=74", json: Self.webhook, headers: headers),
                try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived, headers: headers),
            ]
            for answer in answers {
                #expect(answer.status == .badRequest)
                #expect(answer.json["error"] as? String == "invalid_idempotency_key")
            }
        }
    }

    @Test("device secrets and API keys read the bearer header alike: any case, extra spaces, empty is missing")
    func bearer() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.app().test(.router) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"7431"}"#)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)

            let device = try await client.execute(
                uri: "/api/v1/devices/\(id)/pushes", method: .get, headers: [.authorization: "bearer   \(secret)"]
            )
            #expect(device.status == .ok)
            let backend = try await client.execute(
                uri: "/api/v1/users/u1/sessions", method: .get, headers: [.authorization: "BEARER  \(key)"]
            )
            #expect(backend.status == .ok)

            for header in ["Bearer ", "Basic \(secret)", secret] {
                let refused = try await client.execute(
                    uri: "/api/v1/devices/\(id)/pushes", method: .get, headers: [.authorization: header]
                )
                #expect(refused.status == .unauthorized)
                #expect(refused.json["message"] as? String == "send the device secret as 'Authorization: Bearer <device_secret>'")
            }
        }
    }

    @Test("a platform without a provider is 400 platform_not_configured on the webhook and on sessions")
    func platformNotConfigured() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        let providers = PushRouter(ios: nds.localRouter().provider(for: .ios), android: nil)
        try await nds.app(providers: providers).test(.router) { client in
            let answers = [
                try await client.post("/api/v1/notify?platform=android&token=74", json: Self.webhook),
                try await client.call(
                    .put, "/api/v1/users/u1/sessions/s1", key: key, json: Seed002.login(platform: "android", token: "74")
                ),
            ]
            for answer in answers {
                #expect(answer.status == .badRequest)
                #expect(answer.json["error"] as? String == "platform_not_configured")
                #expect(answer.json["message"] as? String == "no push provider is configured for android")
            }
        }
    }
}
