import CSecp256k1
import Crypto
import CryptoExtras
import Foundation
import HeraldSecp256k1
import HeraldWire

/// NIP-44 v2 encrypted payloads, as NIP-47 (Nostr Wallet Connect) requests and responses carry
/// them: the conversation key is HKDF-extract (salt `nip44-v2`) of the x coordinate of the ECDH
/// point; each message expands it with a random 32-byte nonce into a ChaCha20 key and nonce and
/// an HMAC-SHA256 key; the plaintext is length-prefixed and padded; the payload is base64 of
/// `0x02 || nonce || ciphertext || mac`.
public enum NIP44 {
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The key two parties share: from one's secret key and the other's x-only public key.
    public static func conversationKey(secret: NostrSecretKey, publicKeyHex: String) throws(Failure) -> SymmetricKey {
        guard let x = NostrHex.bytes(publicKeyHex, count: 32), let peer = NodeID(bytes: [0x02] + x),
            let own = NodeSecretKey(bytes: secret.secretBytes)
        else { throw Failure("not an x-only secp256k1 public key") }
        let shared = Array(own.sharedPoint(with: peer).dropFirst())
        return SymmetricKey(data: HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: shared), salt: Array("nip44-v2".utf8)))
    }

    /// The padded length of a plaintext of `length` bytes (1 to 65,535).
    public static func paddedLength(_ length: Int) -> Int {
        guard length > 32 else { return 32 }
        let nextPower = 1 << (Int.bitWidth - (length - 1).leadingZeroBitCount)
        let chunk = nextPower <= 256 ? 32 : nextPower / 8
        return chunk * ((length - 1) / chunk + 1)
    }

    static func messageKeys(_ conversationKey: SymmetricKey, nonce: [UInt8]) -> (chacha: SymmetricKey, chachaNonce: [UInt8], hmac: SymmetricKey) {
        let keys = HKDF<SHA256>.expand(pseudoRandomKey: conversationKey, info: nonce, outputByteCount: 76).withUnsafeBytes { Array($0) }
        return (SymmetricKey(data: keys[0..<32]), Array(keys[32..<44]), SymmetricKey(data: keys[44..<76]))
    }

    /// Encrypts `plaintext` (1 to 65,535 bytes of UTF-8). Tests pass the nonce to reproduce vectors.
    public static func encrypt(_ plaintext: String, conversationKey: SymmetricKey, nonce: [UInt8]? = nil) throws(Failure) -> String {
        let bytes = Array(plaintext.utf8)
        guard (1...65535).contains(bytes.count) else { throw Failure("a plaintext is 1 to 65535 bytes") }
        let nonce = nonce ?? SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        guard nonce.count == 32 else { throw Failure("the nonce is 32 bytes") }
        let (key, chachaNonce, hmacKey) = messageKeys(conversationKey, nonce: nonce)
        var padded = [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        padded += [UInt8](repeating: 0, count: paddedLength(bytes.count) - bytes.count)
        let ciphertext: [UInt8]
        do {
            ciphertext = Array(try Insecure.ChaCha20CTR.encrypt(padded, using: key, nonce: .init(data: chachaNonce)))
        } catch {
            throw Failure("ChaCha20 failed: \(error)")
        }
        let mac = Array(HMAC<SHA256>.authenticationCode(for: nonce + ciphertext, using: hmacKey))
        return Data([2] + nonce + ciphertext + mac).base64EncodedString()
    }

    /// Decrypts a v2 payload; refuses any other version, a bad MAC or bad padding.
    public static func decrypt(_ payload: String, conversationKey: SymmetricKey) throws(Failure) -> String {
        guard !payload.hasPrefix("#") else { throw Failure("unknown encryption version") }
        guard (132...87472).contains(payload.utf8.count), let data = Data(base64Encoded: payload) else {
            throw Failure("invalid payload size or base64")
        }
        let bytes = Array(data)
        guard (99...65603).contains(bytes.count) else { throw Failure("invalid data size") }
        guard bytes[0] == 2 else { throw Failure("unknown encryption version \(bytes[0])") }
        let nonce = Array(bytes[1..<33])
        let ciphertext = Array(bytes[33..<(bytes.count - 32)])
        let mac = Array(bytes.suffix(32))
        let (key, chachaNonce, hmacKey) = messageKeys(conversationKey, nonce: nonce)
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: nonce + ciphertext, using: hmacKey) else {
            throw Failure("invalid MAC")
        }
        let padded: [UInt8]
        do {
            padded = Array(try Insecure.ChaCha20CTR.encrypt(ciphertext, using: key, nonce: .init(data: chachaNonce)))
        } catch {
            throw Failure("ChaCha20 failed: \(error)")
        }
        let length = Int(padded[0]) << 8 | Int(padded[1])
        guard length >= 1, padded.count == 2 + paddedLength(length), padded.count >= 2 + length else { throw Failure("invalid padding") }
        guard let text = String(validating: padded[2..<(2 + length)], as: UTF8.self) else { throw Failure("the plaintext is not UTF-8") }
        return text
    }
}

extension NostrSecretKey {
    /// The 32 secret bytes, for ECDH; never shown.
    var secretBytes: [UInt8] {
        var keypair = self.keypair
        var bytes = [UInt8](repeating: 0, count: 32)
        _ = secp256k1_keypair_sec(secp256k1Context, &bytes, &keypair)
        return bytes
    }
}
