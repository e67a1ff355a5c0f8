import Foundation
import HTTPTypes
import HeraldDevice
import HeraldSecp256k1
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Every route that pushes goes through the device directory: the registration mode, dead
/// tokens, the per-device allowance and the devices-per-identity cap hold on each, tried as a
/// stranger would try them (a payment webhook, an anonymous payer, an NWC request, a gateway
/// registration).
@Suite("One way to a phone: the directory's rules on every route that pushes")
struct OneWayToAPhoneTests {
    static let breez = HTTPField.Name("X-Breez-Signature")!

    /// The types of what reached `token`, in order.
    static func types(_ nds: TestNDS, _ platform: Platform, _ token: String) async throws -> [String] {
        try await nds.store.localPushes(platform: platform, token: token, after: 0, limit: 50).map { try TestPhone.decode($0).type }
    }

    /// What the plugin does with a challenge push: posts its code back.
    static func confirm(_ client: some TestClientProtocol, _ nds: TestNDS, _ platform: Platform, _ token: String) async throws {
        #expect(try await eventually { try await types(nds, platform, token).contains("herald_challenge") })
        let pushes = try await nds.store.localPushes(platform: platform, token: token, after: 0, limit: 50)
        let challenges = pushes.compactMap { push -> DeviceChallenge? in
            if case .deviceChallenge(let challenge) = IncomingPush(json: push.payload).notification { return challenge }
            return nil
        }
        let challenge = try #require(challenges.last)
        let confirmed = try await client.post(
            String(challenge.confirmURL.dropFirst("http://nds.test".count)),
            json: String(decoding: try WireJSON.encode(DeviceConfirmation(code: challenge.code)), as: UTF8.self))
        #expect(confirmed.status == .ok, "\(confirmed.text)")
    }

    static func pay(_ client: some TestClientProtocol, hash: String, to key: NodeSecretKey) async throws -> TestResponse {
        let body = BreezPaymentTests.body(hash: hash, userPubkey: key.nodeID.hex)
        return try await client.post("/api/v1/breez/payments", json: body, headers: [breez: BreezPaymentTests.sign(body)])
    }

    @Test("challenge: a Breez payment reaches the identity's confirmed device only; the unconfirmed one gets nothing but its challenge")
    func challengeBreezPayment() async throws {
        var configured = try BreezPaymentTests.nds()
        configured.settings.registration = .challenge
        let nds = configured
        let alice = BreezPaymentTests.alice
        try await nds.app().test(.router) { client in
            for token in ["fcm-alice-confirmed", "fcm-stranger-unconfirmed"] {
                let made = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: token, keys: [alice]))
                #expect(made.status == .created, "\(made.text)")
            }
            try await Self.confirm(client, nds, .android, "fcm-alice-confirmed")
            let paid = try await Self.pay(client, hash: String(repeating: "1c", count: 32), to: alice)
            #expect(paid.status == .ok, "\(paid.text)")
            #expect(paid.json["devices"] as? Int == 1)
            #expect(paid.json["skipped"] as? Int == 1)
            #expect(try await eventually { try await Self.types(nds, .android, "fcm-alice-confirmed") == ["herald_challenge", "payment_received"] })
            #expect(try await nds.store.counts().pending == 0)
            #expect(try await Self.types(nds, .android, "fcm-stranger-unconfirmed") == ["herald_challenge"])
        }
    }

    @Test("challenge: a Lightning address whose phone moved to a new token is not asked there until the new token is confirmed")
    func challengeLightningAddress() async throws {
        var configured = try TestNDS()
        configured.settings.registration = .challenge
        configured.settings.replyTimeout = .seconds(1)
        let nds = configured
        try await nds.app().test(.live) { client in
            let phone = try await LnurlPayTests.register(client, token: "6f6c642d70686f6e65")
            try await Self.confirm(client, nds, .ios, phone.token)
            #expect(try await LnurlPayTests.claim(client, phone, "mover").status == .created)
            // The token moves (the phone's secret is all it takes, or a stranger holding it).
            let moved = TestToken.apns("6e65772d746f6b656e")
            let put = try await client.execute(
                uri: "/api/v1/devices/\(phone.id)", method: .put,
                headers: [.authorization: "Bearer \(phone.secret)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"platform":"ios","push_token":"\#(moved)"}"#))
            #expect(put.status == .ok, "\(put.text)")
            #expect(try await eventually { try await Self.types(nds, .ios, moved) == ["herald_challenge"] })
            // An anonymous payer: the unconfirmed token is not asked, and the payer hears so at once.
            let asked = try await client.execute(uri: "/.well-known/lnurlp/mover", method: .get)
            #expect(asked.status == .gone, "\(asked.text)")
            #expect(asked.json["status"] as? String == "ERROR")
            #expect(try await Self.types(nds, .ios, moved) == ["herald_challenge"])
            try await Self.confirm(client, nds, .ios, moved)
            // Confirmed again: the payer's request reaches the new token (and times out: nobody answers).
            let again = try await client.execute(uri: "/.well-known/lnurlp/mover", method: .get)
            #expect(again.status == .gatewayTimeout, "\(again.text)")
            #expect(try await Self.types(nds, .ios, moved) == ["herald_challenge", "lnurlpay_info"])
        }
    }

    @Test("challenge: an NWC request for an unconfirmed alias wakes nothing; once confirmed the next one does")
    func challengeNwc() async throws {
        try await NwcTests.withRelays { base, relays in
            var configured = base
            configured.settings.registration = .challenge
            let nds = configured
            let wallet = NwcTests.Wallet()
            try await nds.app().test(.live) { client in
                let made = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-nwc-unconfirmed"}"#)
                let alias = try #require(made.json["alias"] as? String)
                let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(alias)"
                let registered = try await client.post(
                    "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [relays[0].1]))
                #expect(registered.status == .ok, "\(registered.text)")
                _ = try await relays[0].0.subscriptions.waitFor(count: 1)
                await relays[0].0.publish(Data(try wallet.request("get_balance").json.utf8))
                let metrics = { try await client.execute(uri: "/metrics", method: .get).text }
                #expect(try await eventually { try await metrics().contains(#"herald_nwc_events_refused_total{reason="undeliverable"} 1"#) })
                #expect(try await Self.types(nds, .android, "fcm-nwc-unconfirmed") == ["herald_challenge"])
                try await Self.confirm(client, nds, .android, "fcm-nwc-unconfirmed")
                await relays[0].0.publish(Data(try wallet.request("get_info").json.utf8))
                #expect(try await eventually { try await Self.types(nds, .android, "fcm-nwc-unconfirmed") == ["herald_challenge", "nwc_event"] })
            }
        }
    }

    @Test("one device over its push allowance is skipped and reported; the identity's other device still gets the payment")
    func allowancePerDevice() async throws {
        var configured = try BreezPaymentTests.nds()
        configured.settings.targetPushBurst = 1
        configured.settings.targetPushesPerMinute = 1
        let nds = configured
        let alice = BreezPaymentTests.alice
        try await nds.app().test(.router) { client in
            var aliases: [String] = []
            for token in ["fcm-busy", "fcm-idle"] {
                let made = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: token, keys: [alice]))
                aliases.append(try #require(made.json["alias"] as? String))
            }
            // The busy phone's one push of the minute.
            let swap = #"{"event":"swap.update","data":{"id":"s1","status":"transaction.mempool"}}"#
            #expect(try await client.post("/api/v1/notify?token=\(aliases[0])", json: swap).status == .ok)
            let paid = try await Self.pay(client, hash: String(repeating: "2d", count: 32), to: alice)
            #expect(paid.status == .ok, "\(paid.text)")
            #expect(paid.json["devices"] as? Int == 1)
            #expect(paid.json["skipped"] as? Int == 1)
            #expect(try await eventually { try await Self.types(nds, .android, "fcm-idle") == ["payment_received"] })
            #expect(try await Self.types(nds, .android, "fcm-busy") == ["swap_updated"])
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            #expect(metrics.contains(#"herald_devices_skipped_total{reason="rate_limited"} 1"#))
            // Both over their share now: nothing is sent, and Breez is told to retry.
            let again = try await Self.pay(client, hash: String(repeating: "3e", count: 32), to: alice)
            #expect(again.status == .tooManyRequests, "\(again.text)")
        }
    }

    @Test("one gateway device over its allowance is skipped in an identity wake; the identity's other device is still woken")
    func allowancePerDeviceInWakes() async throws {
        var configured = try WakeGatewayTests().gatewayNDS()
        configured.settings.targetPushBurst = 1
        configured.settings.targetPushesPerMinute = 1
        let nds = configured
        let key = try await nds.apiKey([.wake])
        var second = GatewayPhone()
        var first = GatewayPhone()
        second.node = first.node
        second.pubky = first.pubky
        first.token = String(repeating: "a7", count: 32)
        second.token = String(repeating: "b8", count: 32)
        let phones = [first, second]
        try await nds.app().test(.router) { client in
            for phone in phones {
                #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration()).status == .created)
            }
            let one = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(phones[0]))
            #expect(one.status == .accepted, "\(one.text)")
            #expect(one.json["pushed"] as? Int == 2)
            // A second wake at once: both devices spent their one push of the minute.
            let two = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(phones[0]))
            #expect(two.status == .accepted, "\(two.text)")
            #expect(two.json["pushed"] as? Int == 0)
            #expect(two.json["skipped"] as? Int == 2)
        }
    }

    @Test("key: the wake gateway's registrations need a devices key, as POST /api/v1/devices does; without one nothing is stored")
    func keyModeGateway() async throws {
        var configured = try WakeGatewayTests().gatewayNDS()
        configured.settings.registration = .key
        let nds = configured
        let devicesKey = try await nds.apiKey([.devices])
        let phone = GatewayPhone()
        try await nds.app().test(.router) { client in
            let anonymous = try await client.send(.post, "/wake/v1/devices", try phone.registration())
            #expect(anonymous.status == .unauthorized, "\(anonymous.text)")
            let legacy = try await client.post("/wake/api/device", json: #"{"deviceToken":"\#(phone.token)"}"#)
            #expect(legacy.status == .unauthorized, "\(legacy.text)")
            #expect(try await nds.store.wakeGatewayDevices(identity: phone.ln).isEmpty)
            let keyed = try await client.send(
                .post, "/wake/v1/devices", try phone.registration(), headers: [.authorization: "Bearer \(devicesKey)"])
            #expect(keyed.status == .created, "\(keyed.text)")
        }
    }

    @Test("an identity is proven on at most identity_devices_max devices: one more is 409 too_many_devices, on either route, until one is deleted")
    func identityCap() async throws {
        var configured = try BreezPaymentTests.nds()
        configured.settings.identityDevicesMax = 3
        configured.settings.wakeGateway = WakeGatewaySettings(topics: [WakeGatewayTests.htlc.name: WakeGatewayTests.htlc])
        let nds = configured
        let alice = BreezPaymentTests.alice
        try await nds.app().test(.router) { client in
            var made: [TestResponse] = []
            for index in 0..<3 {
                let answer = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: "fcm-cap-\(index)", keys: [alice]))
                #expect(answer.status == .created, "\(answer.text)")
                made.append(answer)
            }
            let fourth = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: "fcm-cap-3", keys: [alice]))
            #expect(fourth.status == .conflict, "\(fourth.text)")
            #expect(fourth.json["error"] as? String == "too_many_devices")
            var gateway = GatewayPhone()
            gateway.node = alice
            let viaGateway = try await client.send(.post, "/wake/v1/devices", try gateway.registration())
            #expect(viaGateway.status == .conflict, "\(viaGateway.text)")
            #expect(viaGateway.json["error"] as? String == "too_many_devices")
            // A producer's one call reaches at most the cap.
            let paid = try await Self.pay(client, hash: String(repeating: "4f", count: 32), to: alice)
            #expect(paid.json["devices"] as? Int == 3)
            // Deleting one makes room.
            let id = try #require(made[1].json["device_id"] as? String)
            let secret = try #require(made[1].json["device_secret"] as? String)
            let deleted = try await client.execute(uri: "/api/v1/devices/\(id)", method: .delete, headers: [.authorization: "Bearer \(secret)"])
            #expect(deleted.status == .noContent)
            let fits = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: "fcm-cap-3", keys: [alice]))
            #expect(fits.status == .created, "\(fits.text)")
        }
    }
}
