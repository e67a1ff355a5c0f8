import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HeraldSecp256k1
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Breez's Spark payment webhook (breez/spark-sdk `docs/breez-sdk/src/guide/lnurl_webhooks.md`)
/// over HTTP, and the identity proofs that say which devices it reaches.
@Suite("Breez payment webhooks")
struct BreezPaymentTests {
    /// As Breez hands it to the integrator: here hex text, used as the HMAC key as given.
    static let secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    static let alice = NodeSecretKey(hex: String(repeating: "31", count: 32))!
    static let bob = NodeSecretKey(hex: String(repeating: "42", count: 32))!

    static func nds() throws -> TestNDS {
        var nds = try TestNDS()
        nds.settings.registrationsPerMinute = 1_000
        nds.settings.breez.webhookSecret = Array(secret.utf8)
        return nds
    }

    /// The body exactly as Breez's serde writes it (field order of `WebhookPayload`).
    static func body(hash: String, userPubkey: String, amountSat: String = "50000") -> String {
        #"{"template":"spark_payment_received","data":{"payment_hash":"\#(hash)","user_pubkey":"\#(userPubkey)","invoice":"lnbc500u1pexample","preimage":"\#(String(repeating: "ab", count: 32))","amount_sat":\#(amountSat),"lightning_address":"alice@wallet.example","sender_comment":"Thanks!","timestamp":1711929600000}}"#
    }

    /// HMAC-SHA256 of the raw bytes under the secret, lower-case hex: computed here, not by Herald.
    static func sign(_ body: String, secret: String = secret) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
    }

    /// A registration proving `ln:<key>` for an Android token.
    static func registration(
        platform: String = "android", token: String, keys: [NodeSecretKey], ts: Int64 = Int64(Date().timeIntervalSince1970),
        signWith: NodeSecretKey? = nil
    ) -> String {
        let identities = keys.map { "ln:" + $0.nodeID.hex }
        let preimage = DeviceIdentityClaim.preimage(audience: "nds.test", platform: platform, pushToken: token, identities: identities, ts: ts)
        let proofs = keys.map {
            IdentityProofBody(identity: "ln:" + $0.nodeID.hex, sig: LightningMessageSignature.sign(preimage, with: signWith ?? $0))
        }
        let request = DeviceRegistrationRequest(platform: platform, pushToken: token, identities: identities, proofs: proofs, ts: ts)
        return String(decoding: try! WireJSON.encode(request), as: UTF8.self)
    }

    @Test("a signed payment reaches both of a user's devices once; a retry replays the jobs and pushes nothing; a user with no device is 202")
    func delivered() async throws {
        let nds = try Self.nds()
        try await nds.app().test(.router) { client in
            let phone = String(repeating: "a1", count: 32)
            for (platform, token) in [("ios", phone), ("android", "fcm-alice-tablet")] {
                let registered = try await client.post(
                    "/api/v1/devices", json: Self.registration(platform: platform, token: token, keys: [Self.alice]))
                #expect(registered.status == .created, "\(registered.text)")
                #expect(registered.json["identities"] as? [String] == ["ln:" + Self.alice.nodeID.hex])
            }
            let hash = String(repeating: "7a", count: 32)
            let body = Self.body(hash: hash, userPubkey: Self.alice.nodeID.hex)
            let first = try await client.post("/api/v1/breez/payments", json: body, headers: [HTTPField.Name("X-Breez-Signature")!: Self.sign(body)])
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.json["devices"] as? Int == 2)
            let jobs = try #require(first.json["jobs"] as? [String])
            #expect(jobs.count == 2)
            #expect(first.headers[HTTPField.Name("Idempotent-Replayed")!] == nil)

            let retry = try await client.post("/api/v1/breez/payments", json: body, headers: [HTTPField.Name("X-Breez-Signature")!: Self.sign(body)])
            #expect(retry.status == .ok)
            #expect(retry.json["jobs"] as? [String] == jobs)
            #expect(retry.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")

            for (platform, token) in [(Platform.ios, phone), (.android, "fcm-alice-tablet")] {
                #expect(try await eventually { try await nds.store.localPushes(platform: platform, token: token, after: 0, limit: 10).count == 1 })
                let push = try #require(try await nds.store.localPushes(platform: platform, token: token, after: 0, limit: 10).first)
                // APNs userInfo (the keys beside aps) or the FCM data map.
                let data = try #require(try JSONSerialization.jsonObject(with: push.payload) as? [String: Any])
                #expect(data["notification_type"] as? String == "payment_received")
                let payload = try #require(data["notification_payload"] as? String)
                let decoded = try WireJSON.decode(PaymentReceived.self, from: Data(payload.utf8))
                #expect(
                    decoded
                        == PaymentReceived(paymentHash: hash, amountSat: 50_000, lightningAddress: "alice@wallet.example", senderComment: "Thanks!"))
                // The preimage stays with the server that was told it.
                #expect(!payload.contains("preimage"))
                if platform == .ios {
                    let alert = (data["aps"] as? [String: Any])?["alert"] as? [String: Any]
                    #expect(alert?["body"] as? String == "Received 50,000 sats")
                }
            }
            // Two jobs, both delivered, and the retry made none: nothing is left that could push again.
            #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 2, dead: 0) })
            #expect(try await nds.store.localPushes(platform: .ios, token: phone, after: 0, limit: 10).count == 1)

            let nobody = Self.body(hash: String(repeating: "7b", count: 32), userPubkey: Self.bob.nodeID.hex)
            let none = try await client.post(
                "/api/v1/breez/payments", json: nobody, headers: [HTTPField.Name("X-Breez-Signature")!: Self.sign(nobody)])
            #expect(none.status == .accepted, "\(none.text)")
            #expect(none.text == #"{"devices":0}"#)
        }
    }

    @Test("40 deliveries of one payment at once, each on its own connection, make one job per device and one push each")
    func concurrentRetries() async throws {
        let nds = try Self.nds()
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { Task { try? await http.shutdown() } }
        try await nds.app().test(.live) { client in
            let port = try #require(client.port)
            for token in ["fcm-alice-1", "fcm-alice-2"] {
                #expect(try await client.post("/api/v1/devices", json: Self.registration(token: token, keys: [Self.alice])).status == .created)
            }
            let body = Self.body(hash: String(repeating: "5d", count: 32), userPubkey: Self.alice.nodeID.hex)
            let signature = Self.sign(body)
            let answers = try await withThrowingTaskGroup(of: (UInt, String).self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/breez/payments")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.headers.add(name: "X-Breez-Signature", value: signature)
                        request.body = .bytes(ByteBuffer(string: body))
                        let response = try await http.execute(request, timeout: .seconds(20))
                        return (response.status.code, String(buffer: try await response.body.collect(upTo: 4096)))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == 200 }, "\(answers.filter { $0.0 != 200 })")
            let jobs = Set(answers.map { ((try? JSONSerialization.jsonObject(with: Data($0.1.utf8))) as? [String: Any])?["jobs"] as? [String] ?? [] })
            #expect(jobs.count == 1 && jobs.first?.count == 2, "\(jobs)")
            #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 2, dead: 0) })
            for token in ["fcm-alice-1", "fcm-alice-2"] {
                #expect(try await nds.store.localPushes(platform: .android, token: token, after: 0, limit: 10).count == 1)
            }
        }
    }

    @Test("a wrong, missing or other-secret signature is 401 and pushes nothing")
    func badSignature() async throws {
        let nds = try Self.nds()
        try await nds.app().test(.router) { client in
            let registered = try await client.post("/api/v1/devices", json: Self.registration(token: "fcm-alice", keys: [Self.alice]))
            #expect(registered.status == .created)
            let body = Self.body(hash: String(repeating: "6c", count: 32), userPubkey: Self.alice.nodeID.hex)
            let tampered = body.replacingOccurrences(of: "50000", with: "50001")
            for (sent, signature) in [(tampered, Self.sign(body)), (body, Self.sign(body, secret: "another")), (body, nil), (body, "zz")] {
                var headers: HTTPFields = [:]
                if let signature { headers[HTTPField.Name("X-Breez-Signature")!] = signature }
                let response = try await client.post("/api/v1/breez/payments", json: sent, headers: headers)
                #expect(response.status == .unauthorized, "\(response.text)")
                #expect(response.json["error"] as? String == "invalid_signature")
            }
            // No job was made, so nothing can push later: no wait proves that.
            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 0))
            #expect(try await nds.store.localPushes(platform: .android, token: "fcm-alice", after: 0, limit: 10).isEmpty)
        }
    }

    @Test("without breez.webhook_secret_file the route is 404 not_configured")
    func notConfigured() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let body = Self.body(hash: String(repeating: "6c", count: 32), userPubkey: Self.alice.nodeID.hex)
            let response = try await client.post(
                "/api/v1/breez/payments", json: body, headers: [HTTPField.Name("X-Breez-Signature")!: Self.sign(body)])
            #expect(response.status == .notFound)
            #expect(response.json["error"] as? String == "not_configured")
        }
    }

    @Test("a proof by another key is 401 invalid_proof and stores no device; an old ts is 401 stale_timestamp")
    func proofs() async throws {
        let nds = try Self.nds()
        try await nds.app().test(.router) { client in
            let forged = try await client.post(
                "/api/v1/devices", json: Self.registration(token: "fcm-mallory", keys: [Self.alice], signWith: Self.bob))
            #expect(forged.status == .unauthorized, "\(forged.text)")
            #expect(forged.json["error"] as? String == "invalid_proof")
            let stale = try await client.post(
                "/api/v1/devices", json: Self.registration(token: "fcm-late", keys: [Self.alice], ts: Int64(Date().timeIntervalSince1970) - 601))
            #expect(stale.status == .unauthorized)
            #expect(stale.json["error"] as? String == "stale_timestamp")
            #expect(try await nds.store.devices(identity: "ln:" + Self.alice.nodeID.hex).isEmpty)
            #expect(try await nds.store.localPushes(platform: .android, token: "fcm-mallory", after: 0, limit: 1).isEmpty)
        }
    }

    @Test("a pk: identity is proven by its Ed25519 signature, and an update replaces the identities")
    func pubky() async throws {
        let nds = try Self.nds()
        let key = Curve25519.Signing.PrivateKey()
        let identity = "pk:" + ZBase32.encode(Array(key.publicKey.rawRepresentation))
        let ts = Int64(Date().timeIntervalSince1970)
        let token = "fcm-pubky"
        let preimage = DeviceIdentityClaim.preimage(audience: "nds.test", platform: "android", pushToken: token, identities: [identity], ts: ts)
        let sig = try key.signature(for: Data(preimage.utf8)).map { String(format: "%02x", $0) }.joined()
        try await nds.app().test(.router) { client in
            let request = DeviceRegistrationRequest(
                platform: "android", pushToken: token, identities: [identity], proofs: [IdentityProofBody(identity: identity, sig: sig)], ts: ts)
            let registered = try await client.post("/api/v1/devices", json: String(decoding: try WireJSON.encode(request), as: UTF8.self))
            #expect(registered.status == .created, "\(registered.text)")
            #expect(registered.json["identities"] as? [String] == [identity])
            let id = try #require(registered.json["device_id"] as? String)
            let secret = try #require(registered.json["device_secret"] as? String)
            #expect(try await nds.store.devices(identity: identity).map(\.device?.id) == [id])

            // Proving ln: instead: pk: is forgotten.
            let update = DeviceTokenUpdate(
                pushToken: token, identities: ["ln:" + Self.alice.nodeID.hex],
                proofs: [
                    IdentityProofBody(
                        identity: "ln:" + Self.alice.nodeID.hex,
                        sig: LightningMessageSignature.sign(
                            DeviceIdentityClaim.preimage(
                                audience: "nds.test", platform: "android", pushToken: token, identities: ["ln:" + Self.alice.nodeID.hex], ts: ts),
                            with: Self.alice))
                ],
                ts: ts)
            let updated = try await client.execute(
                uri: "/api/v1/devices/\(id)", method: .put, headers: [.authorization: "Bearer \(secret)", .contentType: "application/json"],
                body: ByteBuffer(data: try WireJSON.encode(update)))
            #expect(updated.status == .ok, "\(updated.text)")
            #expect(try await nds.store.devices(identity: identity).isEmpty)
            #expect(try await nds.store.identities(deviceID: id) == ["ln:" + Self.alice.nodeID.hex])
        }
    }
}
