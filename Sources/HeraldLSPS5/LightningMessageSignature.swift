import CSecp256k1
import Crypto

/// The message signatures of LND's `signmessage` / `verifymessage` (also Core Lightning's and
/// LDK's), which LSPS0 names for LSP signatures.
///
/// The digest is SHA-256(SHA-256("Lightning Signed Message:" + message)); the signature is a
/// recoverable ECDSA signature written as 65 bytes, `31 + recovery id` and then the compact
/// (r, s), in z-base-32. Verifying recovers the signer's key rather than taking it.
public enum LightningMessageSignature {
    static let prefix = Array("Lightning Signed Message:".utf8)

    static func digest(_ message: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: prefix)
        hasher.update(data: Array(message))
        return Array(SHA256.hash(data: Array(hasher.finalize())))
    }

    /// Signs `message` (RFC 6979 nonces, so the same key and message give the same signature).
    public static func sign(_ message: some Sequence<UInt8>, with key: NodeSecretKey) -> String {
        let hash = digest(message)
        var signature = secp256k1_ecdsa_recoverable_signature()
        guard secp256k1_ecdsa_sign_recoverable(secp256k1Context, &signature, hash, key.bytes, nil, nil) == 1 else {
            fatalError("libsecp256k1 refused to sign with a valid key")
        }
        var compact = [UInt8](repeating: 0, count: 64)
        var recoveryID: Int32 = 0
        _ = secp256k1_ecdsa_recoverable_signature_serialize_compact(secp256k1Context, &compact, &recoveryID, &signature)
        return ZBase32.encode([UInt8(31 + recoveryID)] + compact)
    }

    /// Signs the UTF-8 bytes of `message`.
    public static func sign(_ message: String, with key: NodeSecretKey) -> String {
        sign(message.utf8, with: key)
    }

    /// The node id whose key made `signature` over `message`; nil if `signature` is malformed or
    /// recovers no key.
    public static func recoverNodeID(_ message: some Sequence<UInt8>, signature: String) -> NodeID? {
        guard let bytes = ZBase32.decode(signature), bytes.count == 65,
            (31...34).contains(bytes[0])
        else { return nil }
        var recoverable = secp256k1_ecdsa_recoverable_signature()
        let compact = Array(bytes[1...])
        guard
            secp256k1_ecdsa_recoverable_signature_parse_compact(
                secp256k1Context, &recoverable, compact, Int32(bytes[0]) - 31) == 1
        else { return nil }
        var key = secp256k1_pubkey()
        guard secp256k1_ecdsa_recover(secp256k1Context, &key, &recoverable, digest(message)) == 1 else { return nil }
        return NodeID(unchecked: serializeCompressed(key))
    }

    /// ``recoverNodeID(_:signature:)`` over the UTF-8 bytes of `message`.
    public static func recoverNodeID(_ message: String, signature: String) -> NodeID? {
        recoverNodeID(message.utf8, signature: signature)
    }

    /// Whether `signature` over `message` was made by `nodeID`'s key.
    public static func verify(_ message: some Sequence<UInt8>, signature: String, nodeID: NodeID) -> Bool {
        recoverNodeID(message, signature: signature) == nodeID
    }

    /// ``verify(_:signature:nodeID:)`` over the UTF-8 bytes of `message`.
    public static func verify(_ message: String, signature: String, nodeID: NodeID) -> Bool {
        verify(message.utf8, signature: signature, nodeID: nodeID)
    }
}
