import Foundation
import HeraldLSPS5
import HeraldSecp256k1
import HeraldWire
import Testing

@Suite("LSPS5 notification signatures")
struct LSPS5SignatureTests {
    static let lspKey = NodeSecretKey(hex: String(repeating: "1f", count: 32))!
    static let otherKey = NodeSecretKey(hex: String(repeating: "2e", count: 32))!
    static let signedAt = Date(timeIntervalSince1970: 1_683_195_263.853)  // 2023-05-04T10:14:23.853Z

    static func verifier(at date: Date = signedAt) -> LSPS5Verifier {
        LSPS5Verifier(now: { date })
    }

    static let notifications: [LSPS5Notification] = [
        LSPS5Notification(method: .webhookRegistered),
        LSPS5Notification(method: .paymentIncoming),
        .expirySoon(timeout: 840_123),
        LSPS5Notification(method: .liquidityManagementRequest),
        LSPS5Notification(method: .onionMessageIncoming),
        LSPS5Notification(method: .other("lsps5.goodbye")),
    ]

    @Test("what the LSP signs, the service verifies", arguments: notifications)
    func roundTrip(_ notification: LSPS5Notification) throws {
        let signer = LSPS5Signer(key: Self.lspKey)
        let signed = signer.sign(notification, at: Self.signedAt)
        #expect(signed.timestamp == "2023-05-04T10:14:23.853Z")
        #expect(signed.headers.map(\.name) == ["Content-Type", "x-lsps5-timestamp", "x-lsps5-signature"])
        let received = try Self.verifier().verify(
            body: signed.body, timestamp: signed.timestamp, signature: signed.signature, nodeID: signer.nodeID)
        #expect(received == notification)
    }

    @Test("the signature is the node's Lightning signature over the LSPS5 message text")
    func signedText() {
        let signed = LSPS5Signer(key: Self.lspKey).sign(LSPS5Notification(method: .paymentIncoming), at: Self.signedAt)
        let text =
            "LSPS5: DO NOT SIGN THIS MESSAGE MANUALLY: LSP: At 2023-05-04T10:14:23.853Z I notify "
            + #"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":{}}"#
        #expect(LightningMessageSignature.verify(text, signature: signed.signature, nodeID: Self.lspKey.nodeID))
    }

    @Test("bLIP-55's example, signed with key 1, gives the same signature every time")
    func specExampleSignature() throws {
        // Neither bLIP-55 nor LDK publishes a notification signature; signing is deterministic
        // (RFC 6979) and pinned here, over the spec's example body and timestamp.
        let one = try #require(NodeSecretKey(hex: String(repeating: "0", count: 63) + "1"))
        let body = LSPS5Notification(method: .other("lsps5.goodbye")).body
        let signed = LSPS5Signer(key: one).sign(body: body, timestamp: "2023-05-04T10:52:58.395Z")
        #expect(
            signed.signature
                == "d98gq64fc1fokenqse6xq3dsrd1dkspx9cr46fm83ncxcqjbobxmh7r9hapsqmo651jrnfc6mxs7nqhw5844jn1136ueufofnxwu7wyd"
        )
        let verifier = LSPS5Verifier(now: { ISOTimestamp.parse("2023-05-04T10:55:00Z")! })
        let notification = try verifier.verify(
            body: body, timestamp: signed.timestamp, signature: signed.signature, nodeID: one.nodeID)
        #expect(notification.method == .other("lsps5.goodbye"))
    }

    @Test("a timestamp within ten minutes of the clock passes, either way", arguments: [-600.0, -1, 0, 1, 600])
    func withinTolerance(_ offset: TimeInterval) throws {
        let signed = LSPS5Signer(key: Self.lspKey).sign(LSPS5Notification(method: .paymentIncoming), at: Self.signedAt)
        _ = try Self.verifier(at: Self.signedAt.addingTimeInterval(offset)).verify(
            body: signed.body, timestamp: signed.timestamp, signature: signed.signature, nodeID: Self.lspKey.nodeID)
    }

    @Test("a timestamp more than ten minutes off is stale", arguments: [-601.0, 601, -86_400, 86_400])
    func stale(_ offset: TimeInterval) {
        let signed = LSPS5Signer(key: Self.lspKey).sign(LSPS5Notification(method: .paymentIncoming), at: Self.signedAt)
        let error = #expect(throws: LSPS5VerificationError.self) {
            try Self.verifier(at: Self.signedAt.addingTimeInterval(offset)).verify(
                body: signed.body, timestamp: signed.timestamp, signature: signed.signature,
                nodeID: Self.lspKey.nodeID)
        }
        #expect(error?.code == .staleTimestamp)
    }

    @Test("a notification signed by another node is refused")
    func wrongNode() {
        let signed = LSPS5Signer(key: Self.otherKey).sign(LSPS5Notification(method: .paymentIncoming), at: Self.signedAt)
        let error = #expect(throws: LSPS5VerificationError.self) {
            try Self.verifier().verify(
                body: signed.body, timestamp: signed.timestamp, signature: signed.signature,
                nodeID: Self.lspKey.nodeID)
        }
        #expect(error?.code == .wrongSigner)
    }

    @Test("changing one byte of the body, or the timestamp text, breaks the signature")
    func tamperedBody() throws {
        let signed = LSPS5Signer(key: Self.lspKey).sign(.expirySoon(timeout: 840_123), at: Self.signedAt)
        for index in signed.body.indices {
            var body = signed.body
            body[index] ^= 0x01
            let error = #expect(throws: LSPS5VerificationError.self) {
                try Self.verifier().verify(
                    body: body, timestamp: signed.timestamp, signature: signed.signature, nodeID: Self.lspKey.nodeID)
            }
            #expect(error?.code == .wrongSigner || error?.code == .malformedSignature)
        }
        // Same instant, other text: the signature covers the header as sent.
        #expect(throws: LSPS5VerificationError.self) {
            try Self.verifier().verify(
                body: signed.body, timestamp: "2023-05-04T10:14:23.853+00:00", signature: signed.signature,
                nodeID: Self.lspKey.nodeID)
        }
    }

    @Test("the body is verified as sent, not as Herald would write it")
    func foreignLayout() throws {
        let body = Array(#"{ "params": {"timeout": 12, "extra": [1]}, "method": "lsps5.expiry_soon", "jsonrpc": "2.0" }"#.utf8)
        let signed = LSPS5Signer(key: Self.lspKey).sign(body: body, timestamp: "2023-05-04T10:14:23.853Z")
        let notification = try Self.verifier().verify(
            body: body, timestamp: signed.timestamp, signature: signed.signature, nodeID: Self.lspKey.nodeID)
        #expect(notification.method == .expirySoon)
        #expect(notification.timeout == 12)
    }

    @Test("malformed headers and bodies are told apart")
    func malformed() {
        let signer = LSPS5Signer(key: Self.lspKey)
        let signed = signer.sign(LSPS5Notification(method: .paymentIncoming), at: Self.signedAt)
        func code(body: [UInt8], timestamp: String, signature: String) -> LSPS5VerificationError.Code? {
            do {
                _ = try Self.verifier().verify(
                    body: body, timestamp: timestamp, signature: signature, nodeID: signer.nodeID)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(body: signed.body, timestamp: "yesterday", signature: signed.signature) == .malformedTimestamp)
        #expect(code(body: signed.body, timestamp: signed.timestamp, signature: "not zbase32!") == .malformedSignature)
        #expect(code(body: signed.body, timestamp: signed.timestamp, signature: "") == .malformedSignature)
        let array = Array("[1,2]".utf8)
        let signedArray = signer.sign(body: array, timestamp: signed.timestamp)
        #expect(code(body: array, timestamp: signed.timestamp, signature: signedArray.signature) == .malformedBody)
    }
}
