import Foundation
import HTTPTypes
import HeraldDevice
import HeraldSecp256k1
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWake
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

    @Test("an identity wake honours Idempotency-Key: a retry is the same wake_id, replayed, pushing nothing; another body under the key is 422")
    func identityWakeIdempotency() async throws {
        let nds = try WakeGatewayTests().gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let phone = GatewayPhone()
        try await nds.app().test(.router) { client in
            #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration(topics: ["paykit.sync"])).status == .created)
            let body = WakeGatewayTests.wake(phone, topic: WakeGatewayTests.sync.name)
            let headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "sync-7"]
            let first = try await client.call(.post, "/api/v1/wake", key: key, json: body, headers: headers)
            #expect(first.status == .accepted, "\(first.text)")
            #expect(first.headers[HTTPField.Name("Idempotent-Replayed")!] == nil)
            let wakeID = try #require(first.json["wake_id"] as? String)
            for _ in 0..<3 {
                let again = try await client.call(.post, "/api/v1/wake", key: key, json: body, headers: headers)
                #expect(again.status == .accepted, "\(again.text)")
                #expect(again.json["wake_id"] as? String == wakeID)
                #expect(again.json["pushed"] as? Int == 1)
                #expect(again.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            }
            let other = WakeGatewayTests.wake(phone, topic: WakeGatewayTests.sync.name, payload: #"{"paymentHash":"ffff"}"#)
            let reused = try await client.call(.post, "/api/v1/wake", key: key, json: other, headers: headers)
            #expect(reused.status == .unprocessableContent, "\(reused.text)")
            #expect(reused.json["error"] as? String == "idempotency_key_reused")
            #expect(try await eventually { try await nds.store.counts().delivered == 1 })
            #expect(try await nds.store.counts().pending == 0)
            #expect(try await nds.store.localPushes(platform: .ios, token: phone.token, after: 0, limit: 10).count == 1)
            // Without a key every call is a wake of its own.
            let fresh = try await client.call(.post, "/api/v1/wake", key: key, json: body)
            #expect(fresh.json["wake_id"] as? String != wakeID)
        }
    }

    /// A legacy registration of `token` signed by `node`, its ISO time `ahead` seconds from now.
    static func legacy(token: String, node: NodeSecretKey, encryption: NodeSecretKey, ahead: TimeInterval = 0) -> WakeLegacyRegistration {
        let iso = Date().addingTimeInterval(ahead).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        return WakeLegacyRegistration(
            deviceToken: token, features: ["blocktank.incomingHtlc"], isProduction: true, isoTimestamp: iso, nodeId: node.nodeID.hex,
            publicKey: encryption.nodeID.hex,
            signature: LightningMessageSignature.sign(WakeLegacyRegistration.message(deviceToken: token, isoTimestamp: iso), with: node))
    }

    @Test(
        "a stranger who knows a phone's push token or install id cannot take its gateway registration; the owner, proving it or with its secret, can")
    func gatewayTakeover() async throws {
        let nds = try WakeGatewayTests().gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let owner = GatewayPhone()
        let stranger = NodeSecretKey.random()
        try await nds.app().test(.router) { client in
            // Legacy: the install is the push token.
            let registered = try await client.send(
                .post, "/wake/api/device", Self.legacy(token: owner.token, node: owner.node, encryption: owner.encryption))
            #expect(registered.status == .ok, "\(registered.text)")
            let taken = try await client.send(
                .post, "/wake/api/device", Self.legacy(token: owner.token, node: stranger, encryption: NodeSecretKey.random(), ahead: 590))
            #expect(taken.status == .conflict, "\(taken.text)")
            #expect(taken.json["error"] as? String == "install_taken")
            let woken = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(owner))
            #expect(woken.json["pushed"] as? Int == 1, "\(woken.text)")
            // The owner registers again at once, its clock behind the stranger's `ts`: it wins.
            let again = try await client.send(
                .post, "/wake/api/device", Self.legacy(token: owner.token, node: owner.node, encryption: owner.encryption))
            #expect(again.status == .ok, "\(again.text)")

            // v1: the install id, with another identity, is refused; with the install's secret it is not.
            let phone = GatewayPhone()
            #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration()).status == .created)
            var thief = GatewayPhone()
            thief.installID = phone.installID
            let stolen = try await client.send(.post, "/wake/v1/devices", try thief.registration(ts: Int64(Date().timeIntervalSince1970) + 590))
            #expect(stolen.status == .conflict, "\(stolen.text)")
            #expect(try await nds.store.wakeGatewayDevices(identity: thief.ln).isEmpty)
            var restored = GatewayPhone()
            restored.installID = phone.installID
            let withSecret = try await client.send(.post, "/wake/v1/devices", try restored.registration(), headers: phone.bearer)
            #expect(withSecret.status == .created, "\(withSecret.text)")
        }
    }

    @Test("forty registrations of one install at once settle on one winner")
    func concurrentInstall() async throws {
        let nds = try WakeGatewayTests().gatewayNDS()
        let base = GatewayPhone()
        let phones = (0..<40).map { _ in
            var phone = GatewayPhone()
            phone.installID = base.installID
            phone.node = base.node
            phone.pubky = base.pubky
            return phone
        }
        try await nds.app().test(.live) { client in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for phone in phones { group.addTask { try await client.send(.post, "/wake/v1/devices", try phone.registration()).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .created }, "\(statuses)")
            let left = try await nds.store.wakeGatewayDevices(identity: base.ln)
            #expect(left.count == 1)
            // The one left is one of the forty, whole: its secret opens the device routes.
            let winner = try #require(phones.first { WakeDeviceSecret.sha256($0.secret) == left.first?.gateway.secretSHA256 })
            #expect(try await client.send(.put, "/wake/v1/presence", WakePresenceBody(ttlSecs: 30), headers: winner.bearer).status == .ok)
        }
    }

    @Test("fallbacks follow the install: re-registered before its ack, the ack still cancels the fallback; deleted, its fallback is cancelled")
    func fallbacksFollowTheInstall() async throws {
        var configured = try WakeGatewayTests().gatewayNDS()
        var htlc = WakeGatewayTests.htlc
        htlc.fallbackAfterSeconds = 2
        configured.settings.wakeGateway = WakeGatewaySettings(topics: [htlc.name: htlc])
        let nds = configured
        let key = try await nds.apiKey([.wake])
        try await nds.app().test(.router) { client in
            // Re-registered (a new token, a new secret) between the wake and its ack.
            let phone = GatewayPhone()
            #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration()).status == .created)
            let woken = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(phone))
            let wakeID = try #require(woken.json["wake_id"] as? String)
            var moved = phone
            moved.token = String(repeating: "5e", count: 32)
            moved.secret = WakeDeviceSecret.make()
            #expect(try await client.send(.post, "/wake/v1/devices", try moved.registration()).status == .created)
            let ack = try await client.send(.post, "/wake/v1/acks", WakeAck(id: wakeID, outcome: .handled), headers: moved.bearer)
            #expect(ack.status == .noContent, "\(ack.text)")
            let status = try WireJSON.decode(
                WakeStatus.self, from: Data(buffer: try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key).body))
            #expect(status.devices.map(\.fallback) == [.cancelled])

            // Deleted before its ack: nobody is alerted.
            let gone = GatewayPhone()
            #expect(try await client.send(.post, "/wake/v1/devices", try gone.registration()).status == .created)
            _ = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(gone))
            #expect(try await client.execute(uri: "/wake/v1/devices/self", method: .delete, headers: gone.bearer).status == .noContent)

            try await Task.sleep(for: .seconds(3))
            #expect(try await eventually { try await nds.store.counts().pending == 0 })
            // Each wake push once, and no fallback alert anywhere.
            for (token, pushes) in [(phone.token, 1), (moved.token, 0), (gone.token, 1)] {
                #expect(try await nds.store.localPushes(platform: .ios, token: token, after: 0, limit: 10).count == pushes, "\(token.prefix(8))")
            }
        }
    }

    @Test(
        "an identity proof names its deployment and is taken once: another audience is 401, the same body again 409 proof_replayed, on either route")
    func proofsAreSingleUse() async throws {
        let nds = try BreezPaymentTests.nds()
        let alice = BreezPaymentTests.alice
        try await nds.app().test(.router) { client in
            let body = BreezPaymentTests.registration(token: "fcm-captured", keys: [alice])
            #expect(try await client.post("/api/v1/devices", json: body).status == .created)
            let replayed = try await client.post("/api/v1/devices", json: body)
            #expect(replayed.status == .conflict, "\(replayed.text)")
            #expect(replayed.json["error"] as? String == "proof_replayed")
            #expect(try await nds.store.devices(identity: "ln:" + alice.nodeID.hex).count == 1)
            // Signed for another deployment: not this one's.
            let ts = Int64(Date().timeIntervalSince1970)
            let identity = "ln:" + alice.nodeID.hex
            let elsewhere = DeviceIdentityClaim.preimage(
                audience: "other.example", platform: "android", pushToken: "fcm-elsewhere", identities: [identity], ts: ts)
            let request = DeviceRegistrationRequest(
                platform: "android", pushToken: "fcm-elsewhere", identities: [identity],
                proofs: [IdentityProofBody(identity: identity, sig: LightningMessageSignature.sign(elsewhere, with: alice))], ts: ts)
            let foreign = try await client.post("/api/v1/devices", json: String(decoding: try WireJSON.encode(request), as: UTF8.self))
            #expect(foreign.status == .unauthorized, "\(foreign.text)")
            #expect(foreign.json["error"] as? String == "invalid_proof")

            // The wake gateway's registration, sent twice.
            let phone = GatewayPhone()
            let registration = try phone.registration()
            #expect(try await client.send(.post, "/wake/v1/devices", registration).status == .created)
            let again = try await client.send(.post, "/wake/v1/devices", registration)
            #expect(again.status == .conflict, "\(again.text)")
            #expect(again.json["error"] as? String == "proof_replayed")
        }
    }

    @Test(
        "a PUT moving the token drops the device's identities unless it proves them again: the device secret alone does not carry a user's payments to another phone"
    )
    func tokenMoveDropsIdentities() async throws {
        let nds = try BreezPaymentTests.nds()
        let alice = BreezPaymentTests.alice
        try await nds.app().test(.router) { client in
            let made = try await client.post("/api/v1/devices", json: BreezPaymentTests.registration(token: "fcm-alice-phone", keys: [alice]))
            let id = try #require(made.json["device_id"] as? String)
            let secret = try #require(made.json["device_secret"] as? String)
            let moved = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put, headers: [.authorization: "Bearer \(secret)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"push_token":"fcm-somewhere-else"}"#))
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(moved.json["identities"] == nil)
            #expect(try await nds.store.identities(deviceID: id).isEmpty)
            let paid = try await Self.pay(client, hash: String(repeating: "5a", count: 32), to: alice)
            #expect(paid.status == .accepted, "\(paid.text)")
            #expect(try await nds.store.localPushes(platform: .android, token: "fcm-somewhere-else", after: 0, limit: 10).isEmpty)
        }
    }

    @Test(
        "challenge: a gateway device is woken only once it acknowledged its challenge wake, opened with its key; the legacy route, which cannot, is refused"
    )
    func challengeGateway() async throws {
        var configured = try WakeGatewayTests().gatewayNDS()
        configured.settings.registration = .challenge
        let nds = configured
        let key = try await nds.apiKey([.wake])
        let phone = GatewayPhone()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.router) { client in
                #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration()).status == .created)
                let early = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(phone))
                #expect(early.json["pushed"] as? Int == 0, "\(early.text)")
                #expect(early.json["skipped"] as? Int == 1)
                // Only the challenge reached the token; a stranger's ack of a guessed id confirms nothing.
                let challenge = try #require(try await servers.apns.requests.waitFor(count: 1).first)
                let opened = try WakeEnvelope.open(push: challenge.body, with: phone.encryption)
                #expect(opened.topic == "herald.challenge")
                let guessed = try await client.send(
                    .post, "/wake/v1/acks", WakeAck(id: UUID().uuidString.lowercased(), outcome: .handled), headers: phone.bearer)
                #expect(guessed.status == .notFound, "\(guessed.text)")
                let acked = try await client.send(
                    .post, "/wake/v1/acks", WakeAck(id: try #require(opened.id), outcome: .noHandler), headers: phone.bearer)
                #expect(acked.status == .noContent, "\(acked.text)")
                let woken = try await client.call(.post, "/api/v1/wake", key: key, json: WakeGatewayTests.wake(phone))
                #expect(woken.json["pushed"] as? Int == 1, "\(woken.text)")
                #expect(try await servers.apns.requests.waitFor(count: 2).count == 2)

                let legacy = try await client.send(
                    .post, "/wake/api/device",
                    Self.legacy(token: GatewayPhone().token, node: NodeSecretKey.random(), encryption: NodeSecretKey.random()))
                #expect(legacy.status == .forbidden, "\(legacy.text)")
            }
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
        configured.settings.identity.devicesMax = 3
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
