import Foundation
import HTTPTypes
import HeraldStore
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Wallet backend API keys")
struct BackendAuthTests {
    static let endpoints: [BackendCall] = [
        BackendCall(method: .get, path: "/api/v1/users/u1/sessions", json: nil, scope: .sessions),
        BackendCall(
            method: .put, path: "/api/v1/users/u1/sessions/s1", json: Seed002.login(platform: "android", token: "t1"),
            scope: .sessions
        ),
        BackendCall(method: .patch, path: "/api/v1/users/u1/sessions/s1", json: #"{"push_token":"t2"}"#, scope: .sessions),
        BackendCall(method: .delete, path: "/api/v1/users/u1/sessions/s1", json: nil, scope: .sessions),
        BackendCall(method: .post, path: "/api/v1/users/u1/events", json: Seed002.none, scope: .events),
        BackendCall(method: .post, path: "/api/v1/users/u1/welcome", json: nil, scope: .events),
    ]

    @Test("every backend endpoint refuses a missing, wrong or revoked key with 401", arguments: endpoints)
    func unauthorized(_ call: BackendCall) async throws {
        let nds = try TestNDS()
        let revoked = try await nds.store.createAPIKey(name: "old", scopes: [.admin], now: Date())
        #expect(try await nds.store.revokeAPIKey(id: revoked.key.id, now: Date()))
        let valid = try await nds.apiKey([.admin])
        try await nds.app().test(.router) { client in
            let refused: [(String, HTTPFields)] = [
                ("missing", [:]),
                ("wrong", [.authorization: "Bearer hk_" + String(repeating: "A", count: 43)]),
                ("not a key", [.authorization: "Bearer \(String(valid.dropLast()))"]),
                ("revoked", [.authorization: "Bearer \(revoked.secret)"]),
                ("basic scheme", [.authorization: "Basic \(valid)"]),
            ]
            for (label, headers) in refused {
                let response = try await client.call(call.method, call.path, key: nil, json: call.json, headers: headers)
                #expect(response.status == .unauthorized, "\(label)")
                #expect(response.json["error"] as? String == "unauthorized", "\(label)")
                #expect(response.headers[.wwwAuthenticate] == "Bearer", "\(label)")
            }
        }
    }

    @Test("a key without the endpoint's scope gets 403; the scope itself or admin gets through", arguments: endpoints)
    func forbidden(_ call: BackendCall) async throws {
        let nds = try TestNDS()
        let other: APIScope = call.scope == .sessions ? .events : .sessions
        let underScoped = try await nds.apiKey([other])
        let scoped = try await nds.apiKey([call.scope])
        let admin = try await nds.apiKey([.admin])
        let existing = SessionWrite(userID: "u1", sessionID: "s1", platform: .android, allowNotifications: true, pushToken: "t0")
        _ = try await nds.store.putSession(existing, now: Date())
        try await nds.app().test(.router) { client in
            let response = try await client.call(call.method, call.path, key: underScoped, json: call.json)
            #expect(response.status == .forbidden)
            #expect(response.json["error"] as? String == "forbidden")
            #expect((response.json["message"] as? String)?.contains(call.scope.rawValue) == true)

            for key in [scoped, admin] {
                let allowed = try await client.call(call.method, call.path, key: key, json: call.json)
                #expect(allowed.status != .unauthorized && allowed.status != .forbidden)
                #expect(allowed.status.code < 300, "\(allowed.status) \(allowed.text)")
            }
        }
    }

    @Test("webhooks and device registration need no API key")
    func openEndpointsStayOpen() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let webhook = try await client.post(
                "/api/v1/notify?platform=android&token=t", json: #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#
            )
            #expect(webhook.status == .ok)
            let device = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"t"}"#)
            #expect(device.status == .created)
        }
    }
}
