import Crypto
import Foundation
import HTTPTypes
import HeraldPush
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

/// A phone with a bitkit-core app: its node key, pubky key, encryption key, bearer secret and
/// install id, registering as `wakePrepareRegistration` + `wakeRegister` would.
struct GatewayPhone {
    var node = NodeSecretKey.random()
    var pubky = Curve25519.Signing.PrivateKey()
    var encryption = NodeSecretKey.random()
    var secret = WakeDeviceSecret.make()
    var installID = String(Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString)
    var token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()

    var ln: String { "ln:" + node.nodeID.hex }
    var pk: String { "pk:" + ZBase32.encode(pubky.publicKey.rawRepresentation) }

    func registration(
        audience: String = "nds.test", topics: [String] = ["blocktank.*"], ts: Int64 = Int64(Date().timeIntervalSince1970),
        platform: WakeRegistrationRequest.Platform = .apns, token: String? = nil
    ) throws -> WakeRegistrationRequest {
        var request = WakeRegistrationRequest(
            app: "bitkit", installID: installID, platform: platform, environment: .production, pushToken: token ?? self.token,
            encryptionKey: encryption.nodeID.hex, secretSHA256: WakeDeviceSecret.sha256(secret), identities: [pk, ln], topics: topics, ts: ts)
        let message = request.preimage(audience: audience)
        request.proofs = [
            WakeIdentityProof(identity: ln, sig: LightningMessageSignature.sign(message, with: node)),
            WakeIdentityProof(identity: pk, sig: try pubky.signature(for: Array(message.utf8)).lowercaseHex),
        ]
        return request
    }

    var bearer: HTTPFields { [.authorization: "Bearer " + secret] }
}

extension TestClientProtocol {
    func send<T: Encodable>(_ method: HTTPRequest.Method, _ uri: String, _ body: T, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        return try await execute(uri: uri, method: method, headers: headers, body: ByteBuffer(data: try WireJSON.encode(body)))
    }
}

@Suite("Wake gateway: Bitkit's device API and wakes by identity")
struct WakeGatewayTests {
    static let htlc = WakeGatewayTopic(
        name: "blocktank.incomingHtlc", urgency: .timeSensitive, deadlineSeconds: 60, fallbackAfterSeconds: 1, alertable: true,
        text: WakePushes.Text(title: "Incoming Payment", body: "Open Bitkit now to receive your payment"), description: "An HTLC waits")
    static let sync = WakeGatewayTopic(name: "paykit.sync", urgency: .background, deadlineSeconds: 600)

    func gatewayNDS() throws -> TestNDS {
        var nds = try TestNDS()
        nds.settings.wakeGateway = WakeGatewaySettings(topics: [Self.htlc.name: Self.htlc, Self.sync.name: Self.sync])
        nds.settings.registrationsPerMinute = 1000
        return nds
    }

    static func wake(_ phone: GatewayPhone, topic: String = htlc.name, payload: String = #"{"paymentHash":"e3b0"}"#, collapse: String? = nil)
        -> String
    {
        #"{"identity":"\#(phone.ln)","topic":"\#(topic)","payload":\#(payload)"# + (collapse.map { #","collapse_key":"\#($0)""# } ?? "") + "}"
    }

    @Test(
        "info, topics, registration, a wake sealed to the phone with the gateway's headers in order, ack handled, no fallback; withheld, the fallback arrives"
    )
    func wakeAckAndFallback() async throws {
        let nds = try gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let phone = GatewayPhone()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let info = try await client.execute(uri: "/wake/v1/info", method: .get)
                #expect(info.json["audience"] as? String == "nds.test")
                let topics = try WireJSON.decode(
                    WakeTopicList.self, from: Data(buffer: try await client.execute(uri: "/wake/v1/topics", method: .get).body))
                #expect(topics.topics.map(\.name) == ["blocktank.incomingHtlc", "paykit.sync"])
                #expect(topics.topics[0].display?.title == "Incoming Payment" && topics.topics[0].alertable)

                let registered = try await client.send(
                    .post, "/wake/v1/devices", try phone.registration(topics: ["blocktank.*", "blocktank.unknownThing", "paykit.sync"]))
                #expect(registered.status == .created, "\(registered.text)")
                let answer = try WireJSON.decode(WakeRegistrationAnswer.self, from: Data(buffer: registered.body))
                #expect(answer.topics == ["blocktank.*", "paykit.sync"])
                #expect(answer.unknownTopics == ["blocktank.unknownThing"])
                #expect(Set(answer.identities) == [phone.ln, phone.pk])

                // 1. Woken, and the ack withheld for nothing: handled.
                let woken = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone, collapse: "incomingHtlc:e3b0"))
                #expect(woken.status == .accepted, "\(woken.text)")
                let wakeID = try #require(woken.json["wake_id"] as? String)
                #expect(woken.json["devices"] as? Int == 1)
                let first = try #require(try await servers.apns.requests.waitFor(count: 1).first)
                #expect(first.deviceToken == phone.token)
                let names = first.orderedHeaders.map { $0[0] }.filter { $0.hasPrefix("apns-") }
                #expect(names == ["apns-topic", "apns-id", "apns-expiration", "apns-push-type", "apns-priority", "apns-collapse-id"])
                #expect(first.headers["apns-push-type"] == "alert" && first.headers["apns-priority"] == "10")
                // The collapse id hides the producer's key.
                #expect(first.headers["apns-collapse-id"]?.utf8.count == 64 && first.headers["apns-collapse-id"]?.contains("e3b0") == false)
                let envelope = try WakeEnvelope.open(push: first.body, with: phone.encryption)
                #expect(envelope.id == wakeID && envelope.topic == "blocktank.incomingHtlc" && envelope.urgency == .timeSensitive)
                #expect(envelope.payloadJSON == #"{"paymentHash":"e3b0"}"#)
                #expect(Int64(first.headers["apns-expiration"] ?? "") == envelope.deadline)

                let ack = try await client.send(.post, "/wake/v1/acks", WakeAck(id: wakeID.uppercased(), outcome: .handled), headers: phone.bearer)
                #expect(ack.status == .noContent, "\(ack.text)")

                // 2. Woken again, no ack: its fallback, due after the first's would have been, arrives alone.
                let second = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone))
                let secondID = try #require(second.json["wake_id"] as? String)
                _ = try await servers.apns.requests.waitFor(count: 3)
                // Both wakes pushed, the second's fallback sent, the first's deleted by the ack: 3 jobs
                // delivered and none pending, so no other fallback can still come.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 3, dead: 0) })
                let requests = await servers.apns.requests.all
                #expect(requests.count == 3)
                let fallback = requests[2]
                let marker = try #require(fallback.json?["wake_fallback"] as? [String: Any])
                #expect(marker["v"] as? Int == 1 && marker["id"] as? String == secondID && marker["topic"] as? String == "blocktank.incomingHtlc")
                #expect(fallback.headers["apns-collapse-id"] == secondID)
                #expect(try WakeEnvelope.open(push: fallback.body, with: NodeSecretKey.random()).fallback)
                #expect(requests.filter { $0.json?["wake_fallback"] != nil }.count == 1)

                let status = try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key)
                let firstStatus = try WireJSON.decode(WakeStatus.self, from: Data(buffer: status.body))
                #expect(firstStatus.devices.map(\.outcome) == [.handled])
                #expect(firstStatus.devices.map(\.fallback) == [.cancelled])
                #expect(firstStatus.devices.map(\.pushed) == [true])
                #expect(
                    try await eventually {
                        let answer = try await client.call(.get, "/api/v1/wake/\(secondID)", key: key)
                        return (try? WireJSON.decode(WakeStatus.self, from: Data(buffer: answer.body)))?.devices.first?.fallback == .sent
                    })
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(metrics.contains(#"herald_wake_acks_total{outcome="handled"} 1"#))
                #expect(metrics.contains("herald_wake_fallbacks_total 1"))

                // The dashboard shows the same: two wakes, one ack handled, one fallback cancelled and one sent.
                let admin = try await nds.apiKey([.admin])
                let session = try #require(try await DashboardTests.login(client, key: admin))
                let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie]).text
                let card = try #require(page.range(of: #"id="wakes""#).map { String(page[$0.lowerBound...].prefix(900)) })
                #expect(card.contains("<td>wakes</td><td colspan=\"3\">2 "), "\(card)")
                #expect(card.contains("<tr><td>acks</td><td>1</td><td>0</td><td>0</td></tr>"), "\(card)")
                #expect(card.contains(#"<tr><td>fallbacks</td><td>2</td><td>1</td><td id="fallbacks-sent">1</td></tr>"#), "\(card)")
            }
        }
    }

    @Test(
        "refusals: forged, missing and tampered proofs, stale ts, bad topic filters, unknown secrets, an older registration, a payload over the limit"
    )
    func refusals() async throws {
        let nds = try gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let phone = GatewayPhone()
        try await nds.app().test(.live) { client in
            func expect(
                _ body: WakeRegistrationRequest, _ status: HTTPResponse.Status, _ code: String, sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let response = try await client.send(.post, "/wake/v1/devices", body)
                #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
                #expect(response.json["error"] as? String == code, sourceLocation: sourceLocation)
                #expect(response.json["message"] is String, sourceLocation: sourceLocation)
            }
            var forged = try phone.registration()
            forged.proofs[0].sig = LightningMessageSignature.sign(forged.preimage(audience: "nds.test"), with: NodeSecretKey.random())
            try await expect(forged, .unauthorized, "invalid_proof")
            var missing = try phone.registration()
            missing.proofs.removeLast()
            try await expect(missing, .unauthorized, "missing_proof")
            var tampered = try phone.registration()
            tampered.pushToken = String(repeating: "ab", count: 32)
            try await expect(tampered, .unauthorized, "invalid_proof")
            try await expect(try phone.registration(audience: "elsewhere.example"), .unauthorized, "invalid_proof")
            try await expect(try phone.registration(ts: Int64(Date().timeIntervalSince1970) - 700), .unauthorized, "stale_timestamp")
            // Whose clock is wrong, said in words: the server's time is there to compare with.
            let stale = try await client.send(.post, "/wake/v1/devices", try phone.registration(ts: 1_000_000_000))
            #expect(
                (stale.json["message"] as? String)?.contains("is not within 600 s of this server's clock (unix ") == true, "\(stale.text)")
            #expect((stale.json["message"] as? String)?.contains("check the phone's clock") == true)
            try await expect(try phone.registration(topics: ["Blocktank.x"]), .badRequest, "invalid_request")
            try await expect(try phone.registration(topics: ["*"]), .badRequest, "invalid_request")
            try await expect(try phone.registration(token: "ABCD"), .badRequest, "invalid_request")

            let now = Int64(Date().timeIntervalSince1970)
            let newer = try await client.send(.post, "/wake/v1/devices", try phone.registration(ts: now))
            #expect(newer.status == .created)
            // Ordered by Herald's clock, not the phone's `ts`: the same install registering again replaces it.
            #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration(ts: now - 10)).status == .created)

            // A newer registration from the same install, with a new secret: the old one is revoked.
            var renewed = phone
            renewed.secret = WakeDeviceSecret.make()
            #expect(try await client.send(.post, "/wake/v1/devices", try renewed.registration(ts: now + 1)).status == .created)
            let revoked = try await client.send(.put, "/wake/v1/presence", WakePresenceBody(ttlSecs: 60), headers: phone.bearer)
            #expect(revoked.status == .unauthorized && revoked.json["error"] as? String == "unauthorized")
            let unknown = try await client.send(.put, "/wake/v1/presence", WakePresenceBody(ttlSecs: 60), headers: GatewayPhone().bearer)
            #expect(unknown.status == .unauthorized)
            let malformed = try await client.send(
                .put, "/wake/v1/presence", WakePresenceBody(ttlSecs: 60), headers: [.authorization: "Bearer wkd_short"])
            #expect(malformed.status == .unauthorized)
            let badFilter = try await client.send(.put, "/wake/v1/devices/self/topics", WakeTopicsBody(topics: ["a."]), headers: renewed.bearer)
            #expect(badFilter.status == .badRequest && badFilter.json["error"] as? String == "invalid_request")
            let unknownWake = try await client.send(
                .post, "/wake/v1/acks", WakeAck(id: UUID().uuidString, outcome: .handled), headers: renewed.bearer)
            #expect(unknownWake.status == .notFound && unknownWake.json["error"] as? String == "unknown_wake")

            // Over the payload limit: refused, and nothing is stored or queued.
            let big = #"{"blob":""# + String(repeating: "x", count: 2000) + #""}"#
            let tooBig = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(renewed, payload: big))
            #expect(tooBig.status == .contentTooLarge && tooBig.json["error"] as? String == "wake_payload_too_large")
            let unknownTopic = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(renewed, topic: "blocktank.nothing"))
            #expect(unknownTopic.status == .unprocessableContent)
            #expect(try await nds.store.counts().pending == 0)
        }
    }

    @Test("topics, presence and unregistering: a present phone is not pushed; topics replace; a deleted device's secret is revoked")
    func presenceAndTopics() async throws {
        let nds = try gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let phone = GatewayPhone()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                #expect(try await client.send(.post, "/wake/v1/devices", try phone.registration(topics: ["paykit.sync"])).status == .created)
                // Not subscribed: nobody is woken.
                let none = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone))
                #expect(none.json["devices"] as? Int == 0)

                let topics = try await client.send(
                    .put, "/wake/v1/devices/self/topics", WakeTopicsBody(topics: ["paykit.sync", "blocktank.*", "unknown.topicName"]),
                    headers: phone.bearer)
                let replaced = try WireJSON.decode(WakeTopicsBody.self, from: Data(buffer: topics.body))
                #expect(replaced.topics == ["blocktank.*", "paykit.sync"])
                #expect(replaced.unknownTopics == ["unknown.topicName"])

                let present = try await client.send(.put, "/wake/v1/presence", WakePresenceBody(ttlSecs: 5), headers: phone.bearer)
                let expires = try #require(present.json["expires_at"] as? Int)
                #expect(expires >= Int(Date().timeIntervalSince1970) + 14)  // clamped up to 15 s
                let skipped = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone))
                let skippedID = try #require(skipped.json["wake_id"] as? String)
                let status = try WireJSON.decode(
                    WakeStatus.self, from: Data(buffer: try await client.call(.get, "/api/v1/wake/\(skippedID)", key: key).body))
                #expect(status.devices.map(\.present) == [true])
                #expect(status.devices.map(\.pushed) == [false])

                #expect(try await client.execute(uri: "/wake/v1/presence", method: .delete, headers: phone.bearer).status == .noContent)
                let pushed = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone, topic: "paykit.sync", payload: "null"))
                #expect(pushed.json["devices"] as? Int == 1)
                let request = try #require(try await servers.apns.requests.waitFor(count: 1).first)
                #expect(request.headers["apns-push-type"] == "background" && request.headers["apns-priority"] == "5")
                #expect(request.headers["apns-collapse-id"] == nil)
                let opened = try WakeEnvelope.open(push: request.body, with: phone.encryption)
                #expect(opened.payloadJSON == nil, "\(opened)")

                #expect(try await client.execute(uri: "/wake/v1/devices/self", method: .delete, headers: phone.bearer).status == .noContent)
                #expect(try await client.execute(uri: "/wake/v1/presence", method: .delete, headers: phone.bearer).status == .unauthorized)
                #expect(try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phone)).json["devices"] as? Int == 0)
            }
        }
    }

    @Test("a deployed app's legacy registration gets v0 envelopes; an FCM phone gets the v1 data message")
    func legacyAndFCM() async throws {
        let nds = try gatewayNDS()
        let key = try await nds.apiKey([.wake])
        let legacyPhone = GatewayPhone()
        var second = GatewayPhone()
        second.node = legacyPhone.node  // the same person on two phones
        second.token = "e5Hj9fKqTmW-vector:APA91bG" + String(repeating: "0123456789abcdef", count: 6)
        let android = second
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                // As JavaScript's toISOString() writes it, milliseconds included.
                let iso = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                #expect(iso.hasSuffix("Z") && iso.contains("."))
                let message = WakeLegacyRegistration.message(deviceToken: legacyPhone.token, isoTimestamp: iso)
                let legacy = WakeLegacyRegistration(
                    deviceToken: legacyPhone.token, features: ["blocktank.incomingHtlc", "blocktank.wakeToTimeout"], isProduction: true,
                    isoTimestamp: iso, nodeId: legacyPhone.node.nodeID.hex, publicKey: legacyPhone.encryption.nodeID.hex,
                    signature: LightningMessageSignature.sign(message, with: legacyPhone.node))
                let registered = try await client.send(.post, "/wake/api/device", legacy)
                #expect(registered.status == .ok, "\(registered.text)")
                var forged = legacy
                forged.deviceToken = String(repeating: "cd", count: 32)
                #expect(try await client.send(.post, "/wake/api/device", forged).status == .unauthorized)

                #expect(try await client.send(.post, "/wake/v1/devices", try android.registration(platform: .fcm)).status == .created)

                let woken = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(legacyPhone))
                #expect(woken.json["devices"] as? Int == 2)
                let apns = try #require(try await servers.apns.requests.waitFor(count: 1).first)
                let v0 = try WakeEnvelope.open(push: apns.body, with: legacyPhone.encryption)
                #expect(v0.version == 0 && v0.topic == "blocktank.incomingHtlc" && v0.payloadJSON == #"{"paymentHash":"e3b0"}"#)
                #expect((apns.json?["aps"] as? [String: Any])?["sound"] as? String == "ping.aiff")

                let fcm = try #require(try await servers.fcm.messages.waitFor(count: 1).first)
                let data = try #require(fcm.message?["data"] as? [String: String])
                let v1 = try WakeEnvelope.open(push: try JSONSerialization.data(withJSONObject: data), with: android.encryption)
                #expect(v1.version == 1 && v1.id == woken.json["wake_id"] as? String)
                #expect((fcm.message?["android"] as? [String: Any])?["priority"] as? String == "high")
            }
        }
    }

    @Test("forty phones register and ack at once: every registration and every ack lands")
    func concurrentCallers() async throws {
        var configured = try gatewayNDS()
        // Forty phones of one identity: past the default cap of devices per identity.
        configured.settings.identity.devicesMax = 40
        // The acks race nothing but each other: no fallback falls due while forty of them land on a busy machine.
        var htlc = Self.htlc
        htlc.fallbackAfterSeconds = 30
        configured.settings.wakeGateway = WakeGatewaySettings(topics: [htlc.name: htlc, Self.sync.name: Self.sync])
        let nds = configured
        let key = try await nds.apiKey([.wake])
        var made = (0..<40).map { _ in GatewayPhone() }
        let shared = NodeSecretKey.random()
        for index in made.indices { made[index].node = shared }
        let phones = made
        try await nds.app().test(.live) { client in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for phone in phones { group.addTask { try await client.send(.post, "/wake/v1/devices", try phone.registration()).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .created })
            let woken = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(phones[0]))
            #expect(woken.json["devices"] as? Int == 40)
            let wakeID = try #require(woken.json["wake_id"] as? String)
            let acks = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for phone in phones {
                    group.addTask {
                        try await client.send(.post, "/wake/v1/acks", WakeAck(id: wakeID, outcome: .handled), headers: phone.bearer).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(acks.allSatisfy { $0 == .noContent })
            let status = try WireJSON.decode(
                WakeStatus.self, from: Data(buffer: try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key).body))
            #expect(
                status.devices.count == 40 && status.devices.allSatisfy { $0.outcome == .handled && $0.fallback == .cancelled },
                "\(status.devices.filter { !($0.outcome == .handled && $0.fallback == .cancelled) })")
        }
    }
}
