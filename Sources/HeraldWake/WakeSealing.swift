import Crypto
import Foundation
import HeraldSecp256k1
import HeraldWire

/// The encryption of Bitkit's wake envelopes (bitkit-core `wake/crypto.rs`, the gateway's
/// `wake-proto`): ECDH on secp256k1 between a fresh ephemeral key and the device's key, the
/// compressed shared point `S33`, `key = SHA256(SHA256(S33 || label))` (two plain passes), and
/// AES-256-GCM with no associated data and a 16-byte tag.
public enum WakeSealing {
    /// The legacy (v0) label, with a 16-byte IV.
    public static let v0Label = "bitkit-notifications"
    /// The v1 label, with a 12-byte IV.
    public static let v1Label = "wake-v1"

    /// What sealing produced: the four fields every container carries.
    public struct Sealed: Sendable, Hashable {
        public var cipher: [UInt8]
        public var iv: [UInt8]
        public var tag: [UInt8]
        /// The ephemeral public key, compressed.
        public var publicKey: NodeID

        public init(cipher: [UInt8], iv: [UInt8], tag: [UInt8], publicKey: NodeID) {
            self.cipher = cipher
            self.iv = iv
            self.tag = tag
            self.publicKey = publicKey
        }
    }

    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The AES key two parties share: `SHA256(SHA256(S33 || label))`.
    public static func key(secret: NodeSecretKey, peer: NodeID, label: String) -> SymmetricKey {
        let inner = SHA256.hash(data: secret.sharedPoint(with: peer) + Array(label.utf8))
        return SymmetricKey(data: Array(SHA256.hash(data: Array(inner))))
    }

    /// Seals `plaintext` to `recipient`. Tests pass the ephemeral key and IV to reproduce the
    /// published vectors; a wake passes neither.
    public static func seal(
        _ plaintext: some DataProtocol, to recipient: NodeID, label: String, ephemeral: NodeSecretKey = .random(),
        iv: [UInt8]? = nil
    ) throws -> Sealed {
        let iv = iv ?? randomBytes(label == v0Label ? 16 : 12)
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(plaintext, using: key(secret: ephemeral, peer: recipient, label: label), nonce: AES.GCM.Nonce(data: iv))
        } catch {
            throw Failure("the wake could not be sealed: \(error)")
        }
        return Sealed(cipher: Array(box.ciphertext), iv: iv, tag: Array(box.tag), publicKey: ephemeral.nodeID)
    }

    /// Opens what ``seal(_:to:label:ephemeral:iv:)`` sealed to the key's public half.
    public static func open(_ sealed: Sealed, with secret: NodeSecretKey, label: String) throws -> [UInt8] {
        guard sealed.iv.count == 12 || sealed.iv.count == 16 else { throw Failure("the IV must be 12 or 16 bytes") }
        guard sealed.tag.count == 16 else { throw Failure("the tag must be 16 bytes") }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: sealed.iv), ciphertext: sealed.cipher, tag: sealed.tag)
            return Array(try AES.GCM.open(box, using: key(secret: secret, peer: sealed.publicKey, label: label)))
        } catch {
            // Never the key or the plaintext: only that it did not open.
            throw Failure("the wake did not decrypt with this key")
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
