import CSecp256k1
import Foundation
import HeraldBech32
import HeraldSecp256k1
import HeraldWire

/// A Nostr secret key (BIP-340 over secp256k1): what signs Herald's zap receipts. Written as 64
/// hex digits or NIP-19 `nsec1…`; never printed.
public struct NostrSecretKey: Sendable {
    let keypair: secp256k1_keypair
    /// The x-only public key, 64 lower-case hex digits: the `nostrPubkey` payers check receipts by.
    public let publicKeyHex: String

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    /// From 32 bytes; nil when they are not a valid secret key (zero or past the curve order).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        var keypair = secp256k1_keypair()
        guard secp256k1_keypair_create(secp256k1Context, &keypair, bytes) == 1 else { return nil }
        var xonly = secp256k1_xonly_pubkey()
        guard secp256k1_keypair_xonly_pub(secp256k1Context, &xonly, nil, &keypair) == 1 else { return nil }
        var serialized = [UInt8](repeating: 0, count: 32)
        guard secp256k1_xonly_pubkey_serialize(secp256k1Context, &serialized, &xonly) == 1 else { return nil }
        self.keypair = keypair
        self.publicKeyHex = serialized.lowercaseHex
    }

    /// From the text of a key file: 64 hex digits or `nsec1…`, surrounding whitespace ignored.
    public init(text: String) throws(Invalid) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes: [UInt8]?
        if trimmed.lowercased().hasPrefix("nsec1") {
            guard let decoded = try? Bech32.decode(trimmed.lowercased()), decoded.hrp == "nsec" else {
                throw Invalid(description: "not a valid nsec (bech32 checksum or length)")
            }
            let regrouped = Bech32.regroup(decoded.data, from: 5, to: 8, pad: false)
            bytes = regrouped.count == 32 ? regrouped : nil
        } else {
            bytes = NostrHex.bytes(trimmed, count: 32)
        }
        guard let bytes, let key = NostrSecretKey(bytes: bytes) else {
            throw Invalid(description: "a Nostr secret key is 64 hex digits or nsec1…, and a valid secp256k1 secret")
        }
        self = key
    }

    /// A fresh key, for `herald nostr keygen`.
    public static func generate() -> (key: NostrSecretKey, hex: String) {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            if let key = NostrSecretKey(bytes: bytes) { return (key, bytes.lowercaseHex) }
        }
    }

    /// The BIP-340 signature (64 bytes) of a 32-byte message, with fresh auxiliary randomness
    /// unless `auxRand` is given (the test vectors give it).
    public func sign(_ message: [UInt8], auxRand: [UInt8]? = nil) -> [UInt8] {
        precondition(message.count == 32, "BIP-340 signs 32-byte messages here")
        var generator = SystemRandomNumberGenerator()
        let aux = auxRand ?? (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        var keypair = self.keypair
        var signature = [UInt8](repeating: 0, count: 64)
        // Cannot fail for a valid keypair and a 32-byte message.
        _ = secp256k1_schnorrsig_sign32(secp256k1Context, &signature, message, &keypair, aux)
        return signature
    }
}

/// BIP-340 verification.
public enum Schnorr {
    /// Whether `signature` (64 bytes) signs `message` (32 bytes) under the x-only `publicKey`
    /// (32 bytes). False for a key that is not on the curve.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, message.count == 32, publicKey.count == 32 else { return false }
        var xonly = secp256k1_xonly_pubkey()
        guard secp256k1_xonly_pubkey_parse(secp256k1Context, &xonly, publicKey) == 1 else { return false }
        return secp256k1_schnorrsig_verify(secp256k1Context, signature, message, 32, &xonly) == 1
    }
}

/// Nostr's hex: ids, keys and signatures.
enum NostrHex {
    /// Exactly `count` bytes of hex, either case.
    static func bytes(_ text: String, count: Int) -> [UInt8]? {
        guard text.utf8.count == count * 2 else { return nil }
        return [UInt8](hex: text)
    }

    /// 64 lower-case hex digits: how NIP-01 writes ids and keys.
    static func isLowerHex32(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy(\.isLowerHex)
    }
}
