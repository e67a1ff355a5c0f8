import Crypto

/// The message signatures of LND's `signmessage` / `verifymessage` (also Core Lightning's and
/// LDK's), which LSPS0 names for LSP signatures.
///
/// The digest is SHA-256(SHA-256("Lightning Signed Message:" + message)); the signature is a
/// recoverable ECDSA signature written as 65 bytes, `31 + recovery id` and then the compact
/// (r, s), in z-base-32. Verifying recovers the signer's key rather than taking it.
public enum LightningMessageSignature {
    package static let prefix = Array("Lightning Signed Message:".utf8)

    package static func digest(_ message: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: prefix)
        hasher.update(data: Array(message))
        return Array(SHA256.hash(data: Array(hasher.finalize())))
    }

    /// Signs `message` (RFC 6979 nonces, so the same key and message give the same signature).
    public static func sign(_ message: some Sequence<UInt8>, with key: NodeSecretKey) -> String {
        let signature = RecoverableSignature.sign(digest: digest(message), with: key)
        return ZBase32.encode([31 + signature.recoveryID] + signature.compact)
    }

    /// Signs the UTF-8 bytes of `message`.
    public static func sign(_ message: String, with key: NodeSecretKey) -> String {
        sign(message.utf8, with: key)
    }

    /// The node id whose key made `signature` over `message`; nil if `signature` is malformed or
    /// recovers no key.
    public static func recoverNodeID(_ message: some Sequence<UInt8>, signature: String) -> NodeID? {
        guard let bytes = ZBase32.decode(signature), bytes.count == 65, (31...34).contains(bytes[0]),
            let recoverable = RecoverableSignature(compact: bytes[1...], recoveryID: bytes[0] - 31)
        else { return nil }
        return recoverable.recoverNodeID(digest: digest(message))
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
