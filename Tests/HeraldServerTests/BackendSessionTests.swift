import Foundation
import HTTPTypes
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// Sessions, events and the welcome push through the real router, delivered by the local
/// development provider (the wire shape is checked against the APNs and FCM look-alikes in
/// `BackendDeliveryTests`).
@Suite("Wallet backend sessions and events")
struct BackendSessionTests {
    static let iosToken = String(repeating: "a1", count: 32)
    static let androidToken = "fcm:APA91b-android-1"

    @Test("PUT creates (201) then replaces (200) a session; GET lists it with its token status")
    func putAndList() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.sessions])
        try await nds.app().test(.router) { client in
            let created = try await client.call(
                .put, "/api/v1/users/u1/sessions/s1", key: key, json: Seed002.login(platform: "ios", token: Self.iosToken)
            )
            #expect(created.status == .created)
            #expect(created.json["token_status"] as? String == "active")
            #expect(created.json["push_token"] as? String == Self.iosToken)

            let replaced = try await client.call(
                .put, "/api/v1/users/u1/sessions/s1", key: key, json: Seed002.login(platform: "ios", token: nil, allow: false)
            )
            #expect(replaced.status == .ok)
            #expect(replaced.json["allow_notifications"] as? Bool == false)
            #expect(replaced.json["token_status"] as? String == "none")

            let list = try await client.call(.get, "/api/v1/users/u1/sessions", key: key)
            #expect(list.status == .ok)
            #expect(list.json["user_id"] as? String == "u1")
            #expect(list.json["dropped_dead_tokens"] as? Int == 0)
            let sessions = try #require(list.json["sessions"] as? [[String: Any]])
            #expect(sessions.count == 1)
            #expect(sessions.first?["session_id"] as? String == "s1")

            let other = try await client.call(.get, "/api/v1/users/u2/sessions", key: key)
            #expect((other.json["sessions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "a bad session write is refused with its reason",
        arguments: [
            (Seed002.login(platform: "android", token: nil), HTTPResponse.Status.unprocessableContent, "push_token_required"),
            (Seed002.login(platform: "android", token: ""), .unprocessableContent, "push_token_required"),
            (Seed002.login(platform: "windows", token: "t"), .badRequest, "unknown_platform"),
            (#"{"platform":"android","push_token":"t"}"#, .unprocessableContent, "invalid_body"),
            (#"{"allow_notifications":"yes","platform":"android"}"#, .unprocessableContent, "invalid_body"),
            (#"[1]"#, .badRequest, "invalid_json"),
            (
                #"{"allow_notifications":true,"platform":"android","push_token":"t","n":9007199254740993"# + String(repeating: "0", count: 150)
                    + "e-150}", .badRequest, "invalid_json"
            ),
        ]
    )
    func badSession(_ body: String, _ status: HTTPResponse.Status, _ code: String) async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.sessions])
        try await nds.app().test(.router) { client in
            let response = try await client.call(.put, "/api/v1/users/u1/sessions/s1", key: key, json: body)
            #expect(response.status == status)
            #expect(response.json["error"] as? String == code)
            #expect((response.json["message"] as? String)?.isEmpty == false)
        }
    }

    @Test("an id outside the safe alphabet is refused")
    func badIDs() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.admin])
        try await nds.app().test(.router) { client in
            let user = try await client.call(.get, "/api/v1/users/a:b/sessions", key: key)
            #expect(user.status == .badRequest)
            #expect(user.json["error"] as? String == "invalid_user_id")
            let session = try await client.call(
                .put, "/api/v1/users/u1/sessions/\(String(repeating: "x", count: 129))", key: key,
                json: Seed002.login(platform: "android", token: "t")
            )
            #expect(session.json["error"] as? String == "invalid_session_id")
        }
    }

    @Test("PATCH refreshes the token or the setting; an unknown session is 404; DELETE is 204")
    func patchAndDelete() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.sessions])
        try await nds.app().test(.router) { client in
            let missing = try await client.call(.patch, "/api/v1/users/u1/sessions/s1", key: key, json: #"{"push_token":"x"}"#)
            #expect(missing.status == .notFound)
            #expect(missing.json["error"] as? String == "session_not_found")

            _ = try await client.call(
                .put, "/api/v1/users/u1/sessions/s1", key: key, json: Seed002.login(platform: "android", token: "old")
            )
            let refreshed = try await client.call(.patch, "/api/v1/users/u1/sessions/s1", key: key, json: #"{"push_token":"new"}"#)
            #expect(refreshed.status == .ok)
            #expect(refreshed.json["push_token"] as? String == "new")
            #expect(refreshed.json["allow_notifications"] as? Bool == true)

            let off = try await client.call(
                .patch, "/api/v1/users/u1/sessions/s1", key: key, json: #"{"allow_notifications":false}"#
            )
            #expect(off.json["allow_notifications"] as? Bool == false)
            #expect(off.json["push_token"] as? String == "new")

            let gone = try await client.call(.delete, "/api/v1/users/u1/sessions/s1", key: key)
            #expect(gone.status == .noContent)
            let again = try await client.call(.delete, "/api/v1/users/u1/sessions/s1", key: key)
            #expect(again.status == .noContent)
            let list = try await client.call(.get, "/api/v1/users/u1/sessions", key: key)
            #expect((list.json["sessions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "a documented action without its documented fields is 422 naming the field",
        arguments: [
            (#"{"action":"DEPOSIT_RECEIVED","data":{"transaction_id":"t","amount":100.5,"asset":"USDC","network":"base"}"#, "data.amount"),
            (#"{"action":"DEPOSIT_CONFIRMED","data":{"transaction_id":"t","amount":"1e5","asset":"USDC","network":"base"}"#, "data.amount"),
            (#"{"action":"DEPOSIT_CONFIRMED","data":{"transaction_id":"t","amount":"-1","asset":"USDC","network":"base"}"#, "data.amount"),
            (#"{"action":"DEPOSIT_RECEIVED","data":{"transaction_id":"t","amount":"1.00","asset":"USDC"}"#, "data.network"),
            (#"{"action":"WITHDRAWAL_INITIATED","data":{"transaction_id":"t","amount":"1.00","asset":"USDC"}"#, "data.destination"),
            (#"{"action":"WITHDRAWAL_PROCESSED","data":{"transaction_id":"t","amount":"1.00","asset":"USDC"}"#, "data.status"),
            (#"{"action":"WITHDRAWAL_PROCESSED","data":{"amount":"1.00","asset":"USDC","status":"completed"}"#, "data.transaction_id"),
            (#"{"action":"PROMO","data":{"nested":{"a":1}}"#, "data.nested"),
            (#"{"action":"PROMO","data":{"action":"OTHER"}"#, "data.action"),
        ]
    )
    func invalidEvent(_ head: String, _ field: String) async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.events])
        try await nds.app().test(.router) { client in
            let json = head + #","notification":{"title":"T","body":"B"}}"#
            let response = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: json)
            #expect(response.status == .unprocessableContent)
            #expect(response.json["error"] as? String == "invalid_data")
            #expect((response.json["message"] as? String)?.contains(field) == true, "\(response.text)")
        }
    }

    @Test("an event without notification text is 422")
    func missingNotification() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.events])
        try await nds.app().test(.router) { client in
            let response = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: #"{"action":"NONE"}"#)
            #expect(response.status == .unprocessableContent)
            #expect(response.json["error"] as? String == "invalid_body")
            #expect((response.json["message"] as? String)?.contains("notification") == true)
        }
    }

    @Test("an event reaches every session with notifications on, once per Idempotency-Key; other actions pass through")
    func fanOut() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.sessions, .events])
        try await nds.app().test(.router) { client in
            try await Self.threeSessions(client, key: key)
            let first = try await client.call(
                .post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived, headers: [.idempotencyKey: "ledger-42"]
            )
            #expect(first.status == .ok)
            #expect(first.json["targeted"] as? Int == 2)
            #expect(first.json["skipped_dead"] as? Int == 0)
            let ids = try #require(first.json["job_ids"] as? [String])
            #expect(ids.count == 2)

            let retry = try await client.call(
                .post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived, headers: [.idempotencyKey: "ledger-42"]
            )
            #expect(retry.json["job_ids"] as? [String] == ids)
            #expect(retry.headers[.idempotentReplayed] == "true")

            let promo = try await client.call(
                .post, "/api/v1/users/u1/events", key: key,
                json: #"{"action":"PROMO_LAUNCH","data":{"promo_code":"SPRING","count":3,"vip":true},"notification":{"title":"New","body":"Look"}}"#
            )
            #expect(promo.json["targeted"] as? Int == 2)

            #expect(try await eventually { try await nds.store.counts().delivered == 4 })
            let ios = try await nds.store.localPushes(platform: .ios, token: Self.iosToken, after: 0, limit: 10)
            let android = try await nds.store.localPushes(platform: .android, token: Self.androidToken, after: 0, limit: 10)
            #expect(ios.count == 2)
            #expect(android.count == 2)
            #expect(try await nds.store.localPushes(platform: .android, token: "fcm:muted", after: 0, limit: 10).isEmpty)
            let promoData = try #require(android.last.flatMap { try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any] })
            #expect(promoData["action"] as? String == "PROMO_LAUNCH")
            #expect(promoData["count"] as? String == "3")
            #expect(promoData["vip"] as? String == "true")
            #expect(promoData["campaign_id"] as? String == "")
        }
    }

    @Test("the welcome push goes out once per user, and waits for a session that can receive it")
    func welcomeOnce() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.sessions, .events])
        try await nds.app().test(.router) { client in
            let early = try await client.call(.post, "/api/v1/users/u1/welcome", key: key)
            #expect(early.status == .ok)
            #expect(early.json["sent"] as? Bool == false)
            #expect(early.json["reason"] as? String == "no_active_sessions")

            try await Self.threeSessions(client, key: key)
            let first = try await client.call(.post, "/api/v1/users/u1/welcome", key: key)
            #expect(first.json["sent"] as? Bool == true)
            #expect(first.json["targeted"] as? Int == 2)
            let second = try await client.call(.post, "/api/v1/users/u1/welcome", key: key)
            #expect(second.status == .ok)
            #expect(second.json["sent"] as? Bool == false)
            #expect(second.json["reason"] as? String == "already_sent")
            #expect((second.json["job_ids"] as? [String])?.isEmpty == true)

            #expect(try await eventually { try await nds.store.counts().delivered == 2 })
            let ios = try await nds.store.localPushes(platform: .ios, token: Self.iosToken, after: 0, limit: 10)
            #expect(ios.count == 1)
            let payload = try #require(ios.first.flatMap { try? JSONSerialization.jsonObject(with: $0.payload) as? [String: Any] })
            #expect(payload["action"] as? String == "NONE")
            let aps = payload["aps"] as? [String: Any]
            #expect((aps?["alert"] as? [String: Any])?["title"] as? String == "Welcome! 🚀")
        }
    }

    /// Seed 002's user: an iPhone, an Android phone, and a session with notifications off.
    static func threeSessions(_ client: some TestClientProtocol, key: String) async throws {
        let logins = [
            ("iphone", Seed002.login(platform: "ios", token: iosToken)),
            ("pixel", Seed002.login(platform: "android", token: androidToken)),
            ("tablet", Seed002.login(platform: "android", token: "fcm:muted", allow: false)),
        ]
        for (session, body) in logins {
            let response = try await client.call(.put, "/api/v1/users/u1/sessions/\(session)", key: key, json: body)
            #expect(response.status == .created)
        }
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}
