import Foundation
import HTTPTypes
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Backend events through the outbox to the APNs and FCM look-alikes, checked byte for byte
/// against seed 002's message structure.
@Suite("Wallet backend delivery to APNs and FCM")
struct BackendDeliveryTests {
    static let iosToken = BackendSessionTests.iosToken
    static let androidToken = BackendSessionTests.androidToken

    /// Seed 002's "FCM Message Structure", filled with the deposit of `Seed002.depositReceived`.
    static let seedFCMMessage = ##"""
        {
          "notification": {"title": "Deposit received", "body": "100.00 USDC is on its way", "image": "https://cdn.example.com/deposit.png"},
          "data": {"action": "DEPOSIT_RECEIVED", "campaign_id": "", "campaign_name": "",
                   "transaction_id": "txn_8f2c", "amount": "100.00", "asset": "USDC", "network": "base"},
          "android": {"priority": "high",
                      "notification": {"channel_id": "default", "sound": "default", "color": "#4CAF50", "icon": "ic_notification"}},
          "apns": {"payload": {"aps": {"sound": "default", "badge": 1, "mutable-content": 1}}}
        }
        """##

    @Test("three sessions (iOS, Android, notifications off) get exactly two pushes, shaped as seed 002")
    func twoPushesSeedShaped() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.withMockPush { mocks, providers in
            try await nds.app(providers: providers).test(.live) { client in
                try await BackendSessionTests.threeSessions(client, key: key)
                let response = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived)
                #expect(response.status == .ok)
                #expect(response.json["targeted"] as? Int == 2)

                let apns = try await mocks.apns.requests.waitFor(count: 1)
                let fcm = try await mocks.fcm.messages.waitFor(count: 1)
                #expect(apns.count == 1)
                #expect(fcm.count == 1)

                // FCM: the seed's message, byte for byte in Herald's sorted-key encoding.
                let send = try #require(fcm.first)
                #expect(send.accepted)
                #expect(send.registrationToken == Self.androidToken)
                #expect(
                    String(decoding: send.body, as: UTF8.self)
                        == ##"{"message":{"android":{"notification":{"channel_id":"default","color":"#4CAF50","icon":"ic_notification","sound":"default"},"priority":"HIGH"},"apns":{"payload":{"aps":{"badge":1,"mutable-content":1,"sound":"default"}}},"data":{"action":"DEPOSIT_RECEIVED","amount":"100.00","asset":"USDC","campaign_id":"","campaign_name":"","network":"base","transaction_id":"txn_8f2c"},"notification":{"body":"100.00 USDC is on its way","image":"https://cdn.example.com/deposit.png","title":"Deposit received"},"token":"fcm:APA91b-android-1"}}"##
                )
                // And structurally the seed's example. FCM's enum is `HIGH`; the seed writes
                // `high`, which FCM also accepts: compared case-insensitively.
                var message = try #require(send.message)
                message["token"] = nil
                #expect(Self.normalised(message) == Self.normalised(try Self.object(Self.seedFCMMessage)))

                // APNs: what the iOS app receives as userInfo: the data keys beside aps.
                let push = try #require(apns.first)
                #expect(push.accepted)
                #expect(push.deviceToken == Self.iosToken)
                #expect(push.headers["apns-push-type"] == "alert")
                #expect(push.headers["apns-priority"] == "10")
                #expect(
                    String(decoding: push.body, as: UTF8.self)
                        == #"{"action":"DEPOSIT_RECEIVED","amount":"100.00","aps":{"alert":{"body":"100.00 USDC is on its way","title":"Deposit received"},"badge":1,"mutable-content":1,"sound":"default"},"asset":"USDC","campaign_id":"","campaign_name":"","network":"base","transaction_id":"txn_8f2c"}"#
                )

                // Nothing for the muted tablet, even after the dispatcher is done: two jobs, both
                // delivered, none pending or dead, so no other push can still come.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 2, dead: 0) })
                #expect(await mocks.fcm.messages.count == 1)
                #expect(await mocks.apns.requests.count == 1)
            }
        }
    }

    @Test("a token refresh moves delivery to the new token; logout stops it")
    func refreshAndLogout() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        let newToken = "fcm:APA91b-android-2"
        try await nds.withMockPush { mocks, providers in
            try await nds.app(providers: providers).test(.live) { client in
                try await BackendSessionTests.threeSessions(client, key: key)
                let refreshed = try await client.call(
                    .patch, "/api/v1/users/u1/sessions/pixel", key: key, json: #"{"push_token":"\#(newToken)"}"#
                )
                #expect(refreshed.status == .ok)
                _ = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none)
                let first = try await mocks.fcm.messages.waitFor(count: 1)
                #expect(first.map(\.registrationToken) == [newToken])

                let logout = try await client.call(.delete, "/api/v1/users/u1/sessions/pixel", key: key)
                #expect(logout.status == .noContent)
                let after = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none)
                #expect(after.json["targeted"] as? Int == 1)
                _ = try await mocks.apns.requests.waitFor(count: 2)
                // Three jobs, all delivered and none left: the logged-out pixel gets nothing later either.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 3, dead: 0) })
                #expect(await mocks.fcm.messages.count == 1)
                #expect(await mocks.apns.requests.count == 2)
            }
        }
    }

    @Test("a token FCM calls UNREGISTERED is dropped from its session, counted, and never pushed again")
    func deadTokenDropped() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey()
        try await nds.withMockPush { mocks, providers in
            await mocks.fcm.script.always(.unregistered, for: Self.androidToken)
            try await nds.app(providers: providers).test(.live) { client in
                try await BackendSessionTests.threeSessions(client, key: key)
                let first = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none)
                #expect(first.json["targeted"] as? Int == 2)
                #expect(try await eventually { try await nds.store.isDead(platform: .android, token: Self.androidToken) })

                // Read back before the next event: the status already says dead.
                let before = try await client.call(.get, "/api/v1/users/u1/sessions", key: key)
                #expect(Self.session("pixel", in: before)?["token_status"] as? String == "dead")

                let second = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none)
                #expect(second.json["targeted"] as? Int == 1)
                #expect(second.json["skipped_dead"] as? Int == 1)

                let after = try await client.call(.get, "/api/v1/users/u1/sessions", key: key)
                #expect(after.json["dropped_dead_tokens"] as? Int == 1)
                let pixel = try #require(Self.session("pixel", in: after))
                #expect(pixel["token_status"] as? String == "dead")
                #expect(pixel["push_token"] == nil)
                #expect(Self.session("iphone", in: after)?["token_status"] as? String == "active")

                _ = try await mocks.apns.requests.waitFor(count: 2)
                // Both iPhone pushes delivered, the one to the dead token dead, nothing pending:
                // no push to the dead token can still come.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 2, dead: 1) })
                #expect(await mocks.fcm.messages.count == 1)
                #expect(await mocks.apns.requests.count == 2)

                // The app sends a fresh token: the session is live again.
                let refreshed = try await client.call(
                    .patch, "/api/v1/users/u1/sessions/pixel", key: key, json: #"{"push_token":"fcm:APA91b-android-3"}"#
                )
                #expect(refreshed.json["token_status"] as? String == "active")
            }
        }
    }

    // MARK: Helpers

    static func session(_ id: String, in response: TestResponse) -> [String: Any]? {
        (response.json["sessions"] as? [[String: Any]])?.first { $0["session_id"] as? String == id }
    }

    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// Canonical JSON text of a value, with `android.priority` lower-cased.
    static func normalised(_ message: [String: Any]) -> String {
        var message = message
        if var android = message["android"] as? [String: Any], let priority = android["priority"] as? String {
            android["priority"] = priority.lowercased()
            message["android"] = android
        }
        let data = (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("an event whose data holds a number JSONDecoder would trap on is refused, and the server lives on")
    func trappingNumber() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.events])
        try await nds.app().test(.router) { client in
            let body =
                #"{"action":"NONE","data":{"n":9007199254740993"# + String(repeating: "0", count: 150)
                + #"e-150},"notification":{"title":"Hello","body":"Nothing to do"}}"#
            let response = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: body)
            #expect(response.status == .badRequest)
            #expect(response.json["error"] as? String == "invalid_json")
            let after = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none)
            #expect(after.status.code < 500)
        }
    }
}
