import Crypto
import Foundation
import HeraldWire
import Testing

@Suite("Sealed push envelope (seed 004 §1.1)")
struct SealedPushTests {
    static let data = [
        "notification_type": "swap_updated",
        "notification_payload": #"{"id":"swap-9","status":"transaction.claim.pending"}"#,
        "app_data": "a1",
    ]

    let privateKey = Curve25519.KeyAgreement.PrivateKey()
    var publicKey: SealPublicKey { SealPublicKey(privateKey.publicKey) }

    /// Why opening `sealed` with `key` fails; nil when it opens.
    static func failure(opening sealed: [String: String], with key: Curve25519.KeyAgreement.PrivateKey) -> SealOpenError.Reason? {
        do {
            _ = try SealedPush.open(sealed, with: key)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("a sealed data map opens to exactly the original with the device's private key")
    func roundTrip() throws {
        let sealed = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        #expect(try SealedPush.open(sealed, with: privateKey) == Self.data)
    }

    @Test("a sealed push carries only sealed, seal_kid and sealed_type, and no clear data")
    func exactKeys() throws {
        let sealed = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        #expect(Set(sealed.keys) == ["sealed", "seal_kid", "sealed_type"])
        #expect(sealed["sealed_type"] == "swap_updated")
        #expect(sealed["seal_kid"] == publicKey.keyID)
        let bytes = try #require(Data(base64Encoded: sealed["sealed"] ?? ""))
        // 32-byte encapsulated key, the JSON, and ChaCha20-Poly1305's 16-byte tag.
        #expect(bytes.count == 32 + (try WireJSON.encode(Self.data)).count + 16)
        #expect(!sealed.values.joined().contains("swap-9"))
    }

    @Test("the key id is hex of the first 8 bytes of SHA-256 of the raw key")
    func keyID() {
        let expected = SHA256.hash(data: privateKey.publicKey.rawRepresentation).prefix(8)
            .map { String(format: "%02x", $0) }.joined()
        #expect(publicKey.keyID == expected)
        #expect(publicKey.keyID.count == 16)
    }

    @Test("sealing twice gives different ciphertexts (a fresh encapsulated key each time)")
    func freshEachTime() throws {
        let first = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        let second = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        #expect(first["sealed"] != second["sealed"])
    }

    @Test("another device's key cannot open it")
    func wrongKey() throws {
        let sealed = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        let other = Curve25519.KeyAgreement.PrivateKey()
        #expect(Self.failure(opening: sealed, with: other) == .wrongKey)
        // With the key id forged to the other key's, the HPKE open itself fails.
        var forged = sealed
        forged["seal_kid"] = SealPublicKey(other.publicKey).keyID
        #expect(Self.failure(opening: forged, with: other) == .authenticationFailed)
    }

    @Test("a changed ciphertext does not open")
    func tamperedCiphertext() throws {
        var sealed = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        var bytes = try #require(Data(base64Encoded: sealed["sealed"] ?? ""))
        bytes[bytes.count - 20] ^= 0x01
        sealed["sealed"] = bytes.base64EncodedString()
        #expect(Self.failure(opening: sealed, with: privateKey) == .authenticationFailed)
    }

    @Test("a changed type hint does not open: it is bound as associated data")
    func tamperedHint() throws {
        var sealed = try SealedPush.seal(Self.data, to: publicKey, typeHint: "swap_updated")
        sealed["sealed_type"] = "lnurlpay_info"
        #expect(Self.failure(opening: sealed, with: privateKey) == .authenticationFailed)
    }

    @Test("an opaque collapse id is stable per key, names nothing, and fits APNs' 64 bytes")
    func opaqueCollapseID() {
        let id = SealedPush.opaqueCollapseID("swap:swap-9", for: publicKey)
        #expect(id == SealedPush.opaqueCollapseID("swap:swap-9", for: publicKey))
        #expect(id != SealedPush.opaqueCollapseID("swap:swap-10", for: publicKey))
        #expect(id != SealedPush.opaqueCollapseID("swap:swap-9", for: SealPublicKey(Curve25519.KeyAgreement.PrivateKey().publicKey)))
        #expect(!id.contains("swap") && id.utf8.count <= 64)
    }

    @Test("a push without the envelope is not sealed")
    func notSealed() {
        #expect(!SealedPush.isSealed(Self.data))
        #expect(Self.failure(opening: Self.data, with: privateKey) == .notSealed)
    }

    @Test("a public key parses from base64 and base64url, with or without padding")
    func parsesKeys() throws {
        let raw = privateKey.publicKey.rawRepresentation
        let standard = raw.base64EncodedString()
        let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(try SealPublicKey(base64: standard) == publicKey)
        #expect(try SealPublicKey(base64: url) == publicKey)
        #expect(try SealPublicKey(base64: standard).base64 == standard)
    }

    @Test(
        "a key that is not 32 bytes of base64 is refused with a clear message",
        arguments: [
            "", "not base64!", Data(repeating: 1, count: 31).base64EncodedString(), Data(repeating: 1, count: 33).base64EncodedString(),
        ])
    func refusesKeys(_ text: String) {
        do {
            _ = try SealPublicKey(base64: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.message.contains("seal_key"))
        }
    }
}
