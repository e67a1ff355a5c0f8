import Crypto
import Foundation
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Sealed payloads (seed 004 §1.1) from registration to the push services' bodies: what APNs and
/// FCM receive is the envelope, and the device's key opens it to the exact data.
@Suite("Sealed pushes through the NDS")
struct SealedDeliveryTests {
    static let iosToken = String(repeating: "5e", count: 32)
    static let androidToken = "fcm:sealed-android"
    static let swap = #"{"event":"swap.update","data":{"id":"swap-9","status":"transaction.claim.pending"}}"#

    let deviceKey = Curve25519.KeyAgreement.PrivateKey()
    var sealKey: String { deviceKey.publicKey.rawRepresentation.base64EncodedString() }
    var keyID: String { SealPublicKey(deviceKey.publicKey).keyID }

    /// The string values of a push's data keys, for ``SealedPush/open(_:with:)``.
    static func strings(_ object: [String: Any]) -> [String: String] {
        object.compactMapValues { $0 as? String }
    }

    @Test("a device registered with a seal key gets only aps and the envelope on APNs and FCM, opening to the exact data")
    func webhookSealed() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        let metrics = HeraldMetrics()
        try await nds.withMockPush { mocks, providers in
            try await nds.app(providers: providers, metrics: metrics).test(.live) { client in
                var webhooks: [String] = []
                for (platform, token) in [("ios", Self.iosToken), ("android", Self.androidToken)] {
                    let created = try await client.post(
                        "/api/v1/devices", json: #"{"platform":"\#(platform)","push_token":"\#(token)","seal_key":"\#(sealKey)"}"#
                    )
                    #expect(created.status == .created)
                    #expect(created.json["seal_kid"] as? String == keyID)
                    let url = try #require(created.json["webhook_url"] as? String)
                    webhooks.append(String(url.dropFirst("http://nds.test".count)))
                }
                for path in webhooks {
                    let sent = try await client.post(path + "&app_data=a1", json: Self.swap)
                    #expect(sent.status == .ok)
                }
                let expected = [
                    "notification_type": "swap_updated",
                    "notification_payload": #"{"id":"swap-9","status":"transaction.claim.pending"}"#,
                    "app_data": "a1",
                ]

                let apns = try #require(try await mocks.apns.requests.waitFor(count: 1).first)
                #expect(apns.deviceToken == Self.iosToken)
                let userInfo = try #require(apns.json)
                #expect(Set(userInfo.keys) == ["aps", "sealed", "seal_kid", "sealed_type"])
                #expect(userInfo["seal_kid"] as? String == keyID)
                #expect(userInfo["sealed_type"] as? String == "swap_updated")
                #expect(!String(decoding: apns.body, as: UTF8.self).contains("swap-9"))
                let aps = try #require(userInfo["aps"] as? [String: Any])
                #expect(aps["mutable-content"] as? Int == 1)
                #expect(aps["alert"] != nil)
                // Still collapsing by swap, without naming it.
                let collapse = SealedPush.opaqueCollapseID("swap:swap-9", for: SealPublicKey(deviceKey.publicKey))
                #expect(apns.headers["apns-collapse-id"] == collapse)
                #expect(collapse.count == "sealed:".count + 32)
                #expect(try SealedPush.open(Self.strings(userInfo), with: deviceKey) == expected)

                let fcm = try #require(try await mocks.fcm.messages.waitFor(count: 1).first)
                #expect(fcm.registrationToken == Self.androidToken)
                let data = try #require(fcm.message?["data"] as? [String: Any])
                #expect(Set(data.keys) == ["sealed", "seal_kid", "sealed_type"])
                #expect(!String(decoding: fcm.body, as: UTF8.self).contains("swap-9"))
                #expect(try SealedPush.open(Self.strings(data), with: deviceKey) == expected)

                #expect(metrics.render().contains("herald_sealed_pushes_total 2"))
            }
        }
    }

    @Test("the reply relay's push is sealed too, reply_url inside, and the device's answer still returns")
    func relaySealed() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        try await withPhoneHTTP { http in
            try await nds.app().test(.live) { client in
                let port = try #require(client.port)
                let created = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"7365616c65642d70686f6e65","seal_key":"\#(sealKey)"}"#
                )
                let url = try #require(created.json["webhook_url"] as? String)
                async let held = client.post(String(url.dropFirst("http://nds.test".count)), json: ReplyRelayTests.invoiceRequest)

                let push = try #require(
                    try await TestPhone(nds: nds, platform: .ios, token: "7365616c65642d70686f6e65").rawPushes(after: 0).first
                )
                #expect(Set(push.keys) == ["aps", "sealed", "seal_kid", "sealed_type"])
                #expect(push["sealed_type"] as? String == "invoice_request")
                let opened = try SealedPush.open(Self.strings(push), with: deviceKey)
                #expect(opened["notification_type"] == "invoice_request")
                let payloadText = try #require(opened["notification_payload"])
                let payload = try #require(try JSONSerialization.jsonObject(with: Data(payloadText.utf8)) as? [String: Any])
                #expect(payload["invoice_request"] as? String == "lnr1request")
                let replyURL = try #require(payload["reply_url"] as? String)
                #expect(replyURL.hasPrefix("http://nds.test/api/v1/reply/"))

                let answered = try await TestPhone.answer(replyURL, json: #"{"invoice":"lni1sealed"}"#, port: port, using: http)
                #expect(answered.status == 200)
                let response = try await held
                #expect(response.status == .ok)
                #expect(response.text == #"{"invoice":"lni1sealed"}"#)
            }
        }
    }

    @Test("PUT keeps the seal key when absent and removes it with an empty string")
    func updateSealKey() async throws {
        let nds = try TestNDS(acceptRawTokens: false)
        try await nds.app().test(.router) { client in
            let created = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"t1"}"#)
            #expect(created.json["seal_kid"] == nil)
            let id = try #require(created.json["device_id"] as? String)
            let secret = try #require(created.json["device_secret"] as? String)
            let alias = try #require(created.json["alias"] as? String)
            func put(_ json: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/api/v1/devices/\(id)", method: .put,
                    headers: [.contentType: "application/json", .authorization: "Bearer \(secret)"],
                    body: ByteBuffer(string: json)
                )
            }
            let added = try await put(#"{"push_token":"t2","seal_key":"\#(sealKey)"}"#)
            #expect(added.status == .ok)
            #expect(added.json["seal_kid"] as? String == keyID)
            #expect(try await nds.store.device(alias: alias)?.sealKey == SealPublicKey(deviceKey.publicKey))

            let kept = try await put(#"{"push_token":"t3"}"#)
            #expect(kept.json["seal_kid"] as? String == keyID)
            #expect(try await nds.store.device(alias: alias)?.sealKey != nil)

            let removed = try await put(#"{"push_token":"t3","seal_key":""}"#)
            #expect(removed.status == .ok)
            #expect(removed.json["seal_kid"] == nil)
            #expect(try await nds.store.device(alias: alias)?.sealKey == nil)
        }
    }

    @Test("the size limit is checked on the sealed form: a push that fits in clear can be refused sealed")
    func sizeCheckedSealed() async throws {
        let nds = try TestNDS(acceptRawTokens: true)
        let body = #"{"event":"wallet.custom","data":{"blob":"\#(String(repeating: "a", count: 3000))"}}"#
        try await nds.app().test(.router) { client in
            let clear = try await client.post("/api/v1/notify?platform=ios&token=636c6561722d70686f6e65", json: body)
            #expect(clear.status == .ok)

            let created = try await client.post(
                "/api/v1/devices", json: #"{"platform":"ios","push_token":"7365616c65642d70686f6e65","seal_key":"\#(sealKey)"}"#
            )
            let url = try #require(created.json["webhook_url"] as? String)
            let sealed = try await client.post(String(url.dropFirst("http://nds.test".count)), json: body)
            #expect(sealed.status == .unprocessableContent)
            #expect(sealed.json["error"] as? String == "payload_too_large")
            #expect((sealed.json["message"] as? String)?.hasPrefix("sealed to the device's key") == true)
        }
    }

    @Test("a seal key that is not a 32-byte X25519 key is refused with 400 invalid_seal_key")
    func invalidSealKey() async throws {
        let nds = try TestNDS()
        let apiKey = try await nds.apiKey()
        let bad = Data(repeating: 7, count: 31).base64EncodedString()
        try await nds.app().test(.router) { client in
            for key in [bad, "not base64!"] {
                let created = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"74","seal_key":"\#(key)"}"#
                )
                #expect(created.status == .badRequest)
                #expect(created.json["error"] as? String == "invalid_seal_key")
            }
            let good = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"74"}"#)
            let id = try #require(good.json["device_id"] as? String)
            let secret = try #require(good.json["device_secret"] as? String)
            let put = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put,
                headers: [.contentType: "application/json", .authorization: "Bearer \(secret)"],
                body: ByteBuffer(string: #"{"push_token":"74","seal_key":"\#(bad)"}"#)
            )
            #expect(put.status == .badRequest)
            #expect(put.json["error"] as? String == "invalid_seal_key")

            let session = try await client.call(
                .put, "/api/v1/users/u1/sessions/s1", key: apiKey,
                json: #"{"allow_notifications":true,"platform":"android","push_token":"fcm:x","seal_key":"\#(bad)"}"#
            )
            #expect(session.status == .badRequest)
            #expect(session.json["error"] as? String == "invalid_seal_key")
            #expect(try await nds.store.session(userID: "u1", sessionID: "s1") == nil)
        }
    }

    @Test("a backend session with a seal key gets its events and welcome sealed; its visible text stays")
    func sessionSealed() async throws {
        let nds = try TestNDS()
        let apiKey = try await nds.apiKey()
        try await nds.withMockPush { mocks, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let login = #"{"allow_notifications":true,"platform":"ios","push_token":"\#(Self.iosToken)","seal_key":"\#(sealKey)"}"#
                let put = try await client.call(.put, "/api/v1/users/u1/sessions/iphone", key: apiKey, json: login)
                #expect(put.status == .created)
                #expect(put.json["seal_kid"] as? String == keyID)

                let event = try await client.call(.post, "/api/v1/users/u1/events", key: apiKey, json: Seed002.depositReceived)
                #expect(event.status == .ok)
                let push = try #require(try await mocks.apns.requests.waitFor(count: 1).first)
                let userInfo = try #require(push.json)
                #expect(Set(userInfo.keys) == ["aps", "sealed", "seal_kid", "sealed_type"])
                #expect(userInfo["sealed_type"] as? String == "DEPOSIT_RECEIVED")
                #expect(!String(decoding: push.body, as: UTF8.self).contains("txn_8f2c"))
                let aps = try #require(userInfo["aps"] as? [String: Any])
                #expect((aps["alert"] as? [String: Any])?["title"] as? String == "Deposit received")
                #expect(
                    try SealedPush.open(Self.strings(userInfo), with: deviceKey) == [
                        "action": "DEPOSIT_RECEIVED", "campaign_id": "", "campaign_name": "", "transaction_id": "txn_8f2c",
                        "amount": "100.00", "asset": "USDC", "network": "base",
                    ]
                )

                // PATCH without seal_key keeps it: the welcome is sealed as well.
                let patch = try await client.call(
                    .patch, "/api/v1/users/u1/sessions/iphone", key: apiKey, json: #"{"allow_notifications":true}"#
                )
                #expect(patch.json["seal_kid"] as? String == keyID)
                let welcome = try await client.call(.post, "/api/v1/users/u1/welcome", key: apiKey)
                #expect(welcome.json["sent"] as? Bool == true)
                let second = try #require(try await mocks.apns.requests.waitFor(count: 2).last)
                let welcomeInfo = try #require(second.json)
                #expect(welcomeInfo["sealed_type"] as? String == "NONE")
                #expect(
                    try SealedPush.open(Self.strings(welcomeInfo), with: deviceKey)
                        == ["action": "NONE", "campaign_id": "", "campaign_name": ""]
                )
            }
        }
    }
}

extension TestPhone {
    /// The pushes after `seq` as the device receives them (APNs `userInfo`), undecoded.
    func rawPushes(after seq: Int64, timeout: Duration = .seconds(10)) async throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = try await nds.store.localPushes(platform: platform, token: token, after: seq, limit: 500)
            if !found.isEmpty || ContinuousClock.now >= deadline {
                return try found.map { try JSONSerialization.jsonObject(with: $0.payload) as? [String: Any] ?? [:] }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
