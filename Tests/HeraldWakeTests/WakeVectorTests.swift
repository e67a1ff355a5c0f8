import Crypto
import Foundation
import HeraldSecp256k1
import HeraldWake
import HeraldWire
import Testing

/// bitkit-core's `wake/test_vectors` (copied unchanged, see Vectors/SOURCE.md), reproduced byte
/// for byte where the vector is bytes.
struct WakeVectorTests {
    static func vector(_ name: String) throws -> [String: JSONValue] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors"))
        guard case .object(let members) = try JSONParser.parse(try Data(contentsOf: url)) else {
            throw WakeSealing.Failure("\(name) is not an object")
        }
        return members
    }

    static func string(_ vector: [String: JSONValue], _ key: String) throws -> String {
        try #require(vector[key]?.stringValue, "\(key) missing")
    }

    static func key(_ hex: String) throws -> NodeSecretKey { try #require(NodeSecretKey(hex: hex)) }

    @Test("v0 and v1 envelopes seal to the vectors' containers: shared point, key, cipher, tag")
    func sealing() throws {
        for name in ["v0_server", "v1_envelope"] {
            let vector = try Self.vector(name)
            let ephemeral = try Self.key(try Self.string(vector, "ephemeral_secret_key"))
            let device = try Self.key(try Self.string(vector, "device_secret_key"))
            #expect(ephemeral.nodeID.hex == (try Self.string(vector, "ephemeral_public_key")))
            #expect(device.nodeID.hex == (try Self.string(vector, "device_public_key")))
            #expect(ephemeral.sharedPoint(with: device.nodeID).lowercaseHex == (try Self.string(vector, "shared_point")))
            let label = try Self.string(vector, "label")
            let key = WakeSealing.key(secret: ephemeral, peer: device.nodeID, label: label)
            #expect(key.withUnsafeBytes { Array($0) }.lowercaseHex == (try Self.string(vector, "key")))

            let plaintext = try Self.string(vector, "plaintext")
            let iv = try #require([UInt8](hex: try Self.string(vector, "iv")))
            let sealed = try WakeSealing.seal(Array(plaintext.utf8), to: device.nodeID, label: label, ephemeral: ephemeral, iv: iv)
            let container = WakeContainer(version: name == "v0_server" ? 0 : 1, sealed: sealed)
            #expect(container.json == (try Self.string(vector, "container")))
            #expect(container.json.utf8.count == vector["container_len"]?.int64Value.map(Int.init))
            #expect(Data(sealed.cipher).base64EncodedString() == (try Self.string(vector, "cipher")))
            #expect(sealed.tag.lowercaseHex == (try Self.string(vector, "tag")))
        }
    }

    @Test("the gateway's plaintexts are written byte for byte")
    func plaintexts() throws {
        let v0 = try Self.vector("v0_server")
        let payload = try JSONParser.parse(Array(try Self.string(v0, "payload").utf8))
        let v0Text = WakeEnvelope.v0Plaintext(topic: try Self.string(v0, "topic"), payload: payload, createdAt: try Self.string(v0, "created_at"))
        #expect(String(decoding: v0Text, as: UTF8.self) == (try Self.string(v0, "plaintext")))
        #expect(ISOTimestamp.text(Date(timeIntervalSince1970: 1_704_067_200)) == "2024-01-01T00:00:00.000Z")

        let v1 = try Self.vector("v1_envelope")
        let opened = try WakeEnvelope.open(
            WakeContainer(json: try JSONParser.parse(Array(try Self.string(v1, "container").utf8))),
            with: try Self.key(try Self.string(v1, "device_secret_key")))
        let rewritten = WakeEnvelope.v1Plaintext(
            id: try #require(opened.id), topic: opened.topic, urgency: try #require(opened.urgency), deadline: try #require(opened.deadline),
            payload: try opened.payloadJSON.map { try JSONParser.parse(Array($0.utf8)) })
        #expect(String(decoding: rewritten, as: UTF8.self) == (try Self.string(v1, "plaintext")))
    }

    @Test("the apps' own v0 vector opens on the device side")
    func clientV0() throws {
        let vector = try Self.vector("v0_client")
        let device = try Self.key(try Self.string(vector, "device_secret_key"))
        #expect(device.nodeID.hex == (try Self.string(vector, "device_public_key")))
        let ephemeral = try #require(NodeID(hex: try Self.string(vector, "ephemeral_public_key")))
        #expect(device.sharedPoint(with: ephemeral).lowercaseHex == (try Self.string(vector, "shared_point")))
        let container = try WakeContainer(json: try JSONParser.parse(Array(try Self.string(vector, "container").utf8)))
        #expect(container.json == (try Self.string(vector, "container")))
        let plaintext = try WakeSealing.open(container.sealed, with: device, label: try Self.string(vector, "label"))
        #expect(String(decoding: plaintext, as: UTF8.self) == (try Self.string(vector, "plaintext")))
        let envelope = try WakeEnvelope.open(container, with: device)
        #expect(
            envelope
                == WakeEnvelope(
                    version: 0, id: nil, topic: "blocktank.incomingHtlc", payloadJSON: #"{"secretMessage":"hello"}"#,
                    createdAt: "2024-09-18T13:33:52.555Z"))
        // Another key does not open it, and says nothing of the plaintext.
        #expect(throws: WakeSealing.Failure.self) { try WakeEnvelope.open(container, with: NodeSecretKey.random()) }
    }

    @Test("every push shape of pushes.json, byte for byte: APNs headers in order and body, FCM bodies; the device opens each")
    func pushes() throws {
        let file = try Self.vector("pushes")
        guard case .array(let cases)? = file["cases"] else {
            Issue.record("no cases")
            return
        }
        #expect(cases.count == 10)
        var compared = 0
        for entry in cases {
            guard case .object(let vector) = entry, case .object(let inputs)? = vector["inputs"] else { continue }
            let name = try Self.string(vector, "name")
            let container = try inputs["container"]?.stringValue.map { try WakeContainer(json: try JSONParser.parse(Array($0.utf8))) }
            if let container { #expect(container.json == inputs["container"]?.stringValue, "\(name): container") }
            let wakeID = inputs["wake_id"]?.stringValue ?? ""
            let topic = inputs["topic"]?.stringValue ?? ""
            // The pushes carry the collapse id the gateway derives from the producer's key.
            var collapseKey: String? = nil
            if let producerKey = inputs["collapse_key"]?.stringValue {
                let secret = try #require([UInt8](hex: try Self.string(file, "collapse_secret")))
                collapseKey = WakePushes.collapseID(
                    secret: secret, identity: try Self.string(inputs, "identity"), topic: topic, collapseKey: producerKey)
                #expect(collapseKey == inputs["collapse_id"]?.stringValue, "\(name): collapse id")
            }
            let text = inputs["title"]?.stringValue.map { WakePushes.Text(title: $0, body: inputs["body"]?.stringValue ?? "") }
            let urgency: WakeUrgency =
                switch inputs["interruption_level"]?.stringValue {
                case "time-sensitive": .timeSensitive
                case "active": .alert
                default: .background
                }
            let body: String
            var received: String
            switch try Self.string(vector, "provider") {
            case "apns":
                let topicName = try Self.string(inputs, "apns_topic")
                let apnsID = try Self.string(inputs, "apns_id")
                let expiration = try #require(inputs["expiration"]?.int64Value)
                let request: WakePushes.APNsRequest =
                    if name.hasSuffix("fallback") {
                        WakePushes.apnsFallback(
                            apnsTopic: topicName, apnsID: apnsID, expiration: expiration, urgency: urgency, wakeID: wakeID, topic: topic,
                            collapseKey: collapseKey, text: try #require(text))
                    } else if name.hasSuffix("v0") {
                        WakePushes.apnsV0(apnsTopic: topicName, apnsID: apnsID, expiration: expiration, container: try #require(container))
                    } else {
                        WakePushes.apnsV1(
                            apnsTopic: topicName, apnsID: apnsID, expiration: expiration, urgency: urgency, wakeID: wakeID, topic: topic,
                            collapseKey: collapseKey, text: text, container: try #require(container))
                    }
                guard case .array(let headers)? = vector["headers"] else {
                    Issue.record("\(name): no headers")
                    continue
                }
                #expect(
                    request.headers
                        == headers.map { header in
                            guard case .array(let pair) = header else { return [] }
                            return pair.compactMap(\.stringValue)
                        }, "\(name): headers")
                body = request.body
                received = body
            default:
                let token = try Self.string(inputs, "token")
                let ttl = try #require(inputs["ttl_secs"]?.int64Value)
                if name.hasSuffix("fallback") {
                    body = WakePushes.fcmFallback(
                        token: token, ttlSeconds: ttl, wakeID: wakeID, topic: topic, collapseKey: collapseKey, text: try #require(text),
                        channelID: try Self.string(inputs, "channel_id"))
                } else if name.hasSuffix("v0") {
                    body = WakePushes.fcmV0(token: token, ttlSeconds: ttl, container: try #require(container))
                } else {
                    body = WakePushes.fcmV1(
                        token: token, ttlSeconds: ttl, highPriority: inputs["priority"]?.stringValue == "high", collapseKey: collapseKey,
                        container: try #require(container))
                }
                // The device reads the data map (RemoteMessage.data).
                let message = try #require(try JSONParser.parse(Array(body.utf8))["message"]?["data"])
                var writer = JSONWriter()
                writer.value(message)
                received = String(decoding: writer.bytes, as: UTF8.self)
            }
            #expect(body == (try Self.string(vector, "body")), "\(name): body")
            #expect(body.utf8.count == vector["body_len"]?.int64Value.map(Int.init), "\(name): body_len")
            compared += 1

            if name.hasSuffix("fallback") {
                let envelope = try WakeEnvelope.open(push: Array(received.utf8), with: NodeSecretKey.random())
                #expect(envelope == WakeEnvelope(version: 1, id: wakeID, topic: topic, fallback: true), "\(name)")
            } else if let secret = vector["device_secret_key"]?.stringValue {
                let key = try Self.key(secret)
                let envelope = try WakeEnvelope.open(push: Array(received.utf8), with: key)
                let plaintext = try WakeSealing.open(try #require(container).sealed, with: key, label: try #require(container).label)
                #expect(String(decoding: plaintext, as: UTF8.self) == (try Self.string(vector, "plaintext")), "\(name): plaintext")
                #expect(envelope.topic == (name.hasSuffix("v0") ? "blocktank.incomingHtlc" : topic), "\(name): topic")
                if !name.hasSuffix("v0") { #expect(envelope.id == wakeID, "\(name): id") }
                if String(decoding: plaintext, as: UTF8.self).hasSuffix(#""payload":null}"#) { #expect(envelope.payloadJSON == nil, "\(name)") }
            }
        }
        #expect(compared == 10)
    }

    @Test("the collapse rule: up to 64 visible ASCII characters pass, anything else is SHA-256 hex")
    func collapseRule() {
        #expect(WakePushes.collapse("abc") == "abc")
        #expect(WakePushes.collapse(String(repeating: "a", count: 64)) == String(repeating: "a", count: 64))
        #expect(WakePushes.collapse(String(repeating: "a", count: 65)).utf8.count == 64)
        #expect(WakePushes.collapse("a b") == Array(SHA256.hash(data: Array("a b".utf8))).lowercaseHex)
        #expect(WakePushes.collapse("") == Array(SHA256.hash(data: [UInt8]())).lowercaseHex)
    }

    @Test("registration_v1: the 12-line preimage, the device secret, the encryption key and both proofs")
    func registration() throws {
        let vector = try Self.vector("registration_v1")
        guard case .object(let requestJSON)? = vector["request"] else {
            Issue.record("no request")
            return
        }
        var writer = JSONWriter()
        writer.value(.object(requestJSON))
        let request = try WireJSON.decode(WakeRegistrationRequest.self, from: writer.data)
        let preimage = request.preimage(audience: try Self.string(vector, "audience"))
        #expect(preimage == (try Self.string(vector, "preimage")))
        #expect(Array(SHA256.hash(data: Array(preimage.utf8))).lowercaseHex == (try Self.string(vector, "preimage_sha256")))

        let secret = WakeDeviceSecret.make(bytes: try #require([UInt8](hex: try Self.string(vector, "device_secret_bytes"))))
        #expect(secret == (try Self.string(vector, "device_secret")))
        #expect(WakeDeviceSecret.hasForm(secret))
        #expect(WakeDeviceSecret.sha256(secret) == request.secretSHA256)
        #expect(try Self.key(try Self.string(vector, "encryption_secret_key")).nodeID.hex == request.encryptionKey)

        let node = try Self.key(try Self.string(vector, "ln_secret_key"))
        #expect("ln:" + node.nodeID.hex == (try Self.string(vector, "ln_identity")))
        #expect(LightningMessageSignature.sign(preimage, with: node) == (try Self.string(vector, "ln_proof")))
        let seed = try #require([UInt8](hex: try Self.string(vector, "pk_seed")))
        let pubky = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        #expect(pubky.publicKey.rawRepresentation.lowercaseHex == (try Self.string(vector, "pk_public_key")))
        #expect("pk:" + ZBase32.encode(pubky.publicKey.rawRepresentation) == (try Self.string(vector, "pk_identity")))
        #expect(try pubky.signature(for: Array(preimage.utf8)).lowercaseHex == (try Self.string(vector, "pk_proof")))

        #expect(request.proofs.count == 2)
        for proof in request.proofs {
            let identity = try #require(ProvenIdentity(proof.identity))
            #expect(identity.verifies(proof.sig, over: preimage), "\(proof.identity)")
            // A field changed after signing breaks every proof.
            var changed = request
            changed.topics.append("blocktank.extra")
            #expect(!identity.verifies(proof.sig, over: changed.preimage(audience: try Self.string(vector, "audience"))))
        }
    }

    @Test("legacy registration: the node's signature over bitkit-notifications + token + timestamp, zbase32 and hex")
    func legacyRegistration() throws {
        let vector = try Self.vector("legacy_registration")
        let node = try Self.key(try Self.string(vector, "node_secret_key"))
        #expect(node.nodeID.hex == (try Self.string(vector, "node_id")))
        let message = WakeLegacyRegistration.message(
            deviceToken: try Self.string(vector, "device_token"), isoTimestamp: try Self.string(vector, "iso_timestamp"))
        #expect(message == (try Self.string(vector, "message")))
        #expect(LightningMessageSignature.sign(message, with: node) == (try Self.string(vector, "signature_zbase32")))

        let body = try WireJSON.decode(WakeLegacyRegistration.self, from: Data(try Self.string(vector, "request_body").utf8))
        #expect(body.features.count == 5)
        #expect(try Self.key(try Self.string(vector, "device_secret_key")).nodeID.hex == body.publicKey)
        #expect(body.verifies())
        var hex = body
        hex.signature = try Self.string(vector, "signature_hex")
        #expect(hex.verifies())
        var forged = body
        forged.deviceToken = String(repeating: "0", count: 64)
        #expect(!forged.verifies())
    }
}
