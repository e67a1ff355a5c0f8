import Crypto
import Foundation
import HeraldWire
import Testing

/// RFC 8291's encryption, against its Appendix A byte for byte and against itself.
@Suite("Web Push message encryption (RFC 8291, aes128gcm)")
struct WebPushMessageTests {
    // RFC 8291, Appendix A.
    static let plaintext = Data("When I grow up, I want to be a watermelon".utf8)
    static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let subscriberPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let subscriberPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    @Test("Appendix A: its keys, salt and plaintext give its body, byte for byte")
    func appendixAEncrypts() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: base64URL(Self.senderPrivate))
        let body = try WebPushMessage.encrypt(
            Self.plaintext, to: base64URL(Self.subscriberPublic), authSecret: base64URL(Self.authSecret),
            salt: base64URL(Self.salt), senderKey: sender)
        #expect(body == base64URL(Self.body))
    }

    @Test("Appendix A: its body opens with the subscriber's key to its plaintext")
    func appendixADecrypts() throws {
        let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: base64URL(Self.subscriberPrivate))
        #expect(key.publicKey.x963Representation == base64URL(Self.subscriberPublic))
        let plaintext = try WebPushMessage.decrypt(base64URL(Self.body), privateKey: key, authSecret: base64URL(Self.authSecret))
        #expect(plaintext == Self.plaintext)
    }

    @Test("fresh salt and key per message; a changed byte, another secret or a cut body does not open")
    func roundTripAndTampering() throws {
        let device = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let message = Data(#"{"notification_type":"payment_received","amount_sat":"2100"}"#.utf8)
        let first = try WebPushMessage.encrypt(message, to: device.publicKey.x963Representation, authSecret: auth)
        let second = try WebPushMessage.encrypt(message, to: device.publicKey.x963Representation, authSecret: auth)
        #expect(first != second)
        #expect(first.count == WebPushMessage.headerBytes + message.count + WebPushMessage.overheadBytes)
        #expect(try WebPushMessage.decrypt(first, privateKey: device, authSecret: auth) == message)

        var tampered = first
        tampered[tampered.count - 20] ^= 1
        #expect(throws: WebPushMessage.Failure.cannotOpen) {
            try WebPushMessage.decrypt(tampered, privateKey: device, authSecret: auth)
        }
        var otherAuth = auth
        otherAuth[0] ^= 1
        #expect(throws: WebPushMessage.Failure.cannotOpen) {
            try WebPushMessage.decrypt(first, privateKey: device, authSecret: otherAuth)
        }
        #expect(throws: WebPushMessage.Failure.self) {
            try WebPushMessage.decrypt(first.prefix(60), privateKey: device, authSecret: auth)
        }
    }

    @Test("a p256dh off the curve or of the wrong length, a short auth secret, a body past one record: refused")
    func refusals() throws {
        let device = P256.KeyAgreement.PrivateKey()
        let auth = Data(repeating: 7, count: 16)
        var offCurve = device.publicKey.x963Representation
        offCurve[64] ^= 1
        #expect(throws: WebPushMessage.Failure.invalidKey) {
            try WebPushMessage.encrypt(Data("x".utf8), to: offCurve, authSecret: auth)
        }
        #expect(throws: WebPushMessage.Failure.invalidKey) {
            try WebPushMessage.encrypt(Data("x".utf8), to: device.publicKey.compressedRepresentation, authSecret: auth)
        }
        #expect(throws: WebPushMessage.Failure.invalidAuthSecret) {
            try WebPushMessage.encrypt(Data("x".utf8), to: device.publicKey.x963Representation, authSecret: auth.prefix(15))
        }
        let largest = Data(repeating: 0x41, count: WebPushMessage.recordSize - WebPushMessage.overheadBytes)
        #expect(
            try WebPushMessage.decrypt(
                WebPushMessage.encrypt(largest, to: device.publicKey.x963Representation, authSecret: auth),
                privateKey: device, authSecret: auth) == largest)
        #expect(throws: WebPushMessage.Failure.tooLarge) {
            try WebPushMessage.encrypt(largest + [0x41], to: device.publicKey.x963Representation, authSecret: auth)
        }
    }
}

private func base64URL(_ text: String) -> Data { Data(base64URL: text)! }
