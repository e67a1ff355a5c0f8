import CSecp256k1

/// A recoverable ECDSA signature over a 32-byte digest: the compact (r, s) and the recovery id
/// that lets a reader find the signer's key from the signature alone.
///
/// Lightning uses it twice: message signatures (`signmessage`, LSPS0/LSPS5) write it as
/// `31 + id` then (r, s) in z-base-32; BOLT11 invoices write (r, s) then the id, in bech32.
/// Both framings build on this one pair of calls into libsecp256k1.
public struct RecoverableSignature: Sendable, Hashable {
    /// r then s, 32 bytes each, big-endian.
    public let compact: [UInt8]
    /// 0 to 3.
    public let recoveryID: UInt8

    /// Nil unless `compact` is 64 bytes that libsecp256k1 accepts and `recoveryID` is 0 to 3.
    public init?(compact: some Collection<UInt8>, recoveryID: UInt8) {
        let compact = Array(compact)
        guard compact.count == 64, recoveryID < 4 else { return nil }
        var parsed = secp256k1_ecdsa_recoverable_signature()
        guard secp256k1_ecdsa_recoverable_signature_parse_compact(secp256k1Context, &parsed, compact, Int32(recoveryID)) == 1
        else { return nil }
        self.compact = compact
        self.recoveryID = recoveryID
    }

    private init(unchecked compact: [UInt8], recoveryID: UInt8) {
        self.compact = compact
        self.recoveryID = recoveryID
    }

    /// Signs a 32-byte `digest` with RFC 6979 nonces: the same key and digest give the same signature.
    public static func sign(digest: some Collection<UInt8>, with key: NodeSecretKey) -> RecoverableSignature {
        let digest = Array(digest)
        precondition(digest.count == 32, "a recoverable signature signs a 32-byte digest")
        var signature = secp256k1_ecdsa_recoverable_signature()
        guard secp256k1_ecdsa_sign_recoverable(secp256k1Context, &signature, digest, key.bytes, nil, nil) == 1 else {
            fatalError("libsecp256k1 refused to sign with a valid key")
        }
        var compact = [UInt8](repeating: 0, count: 64)
        var recoveryID: Int32 = 0
        _ = secp256k1_ecdsa_recoverable_signature_serialize_compact(secp256k1Context, &compact, &recoveryID, &signature)
        return RecoverableSignature(unchecked: compact, recoveryID: UInt8(recoveryID))
    }

    /// The node id whose key signed `digest`; nil if no key recovers (a digest other than the
    /// signed one recovers some other key instead, so compare the result).
    public func recoverNodeID(digest: some Collection<UInt8>) -> NodeID? {
        let digest = Array(digest)
        guard digest.count == 32 else { return nil }
        var parsed = secp256k1_ecdsa_recoverable_signature()
        guard secp256k1_ecdsa_recoverable_signature_parse_compact(secp256k1Context, &parsed, compact, Int32(recoveryID)) == 1
        else { return nil }
        var key = secp256k1_pubkey()
        guard secp256k1_ecdsa_recover(secp256k1Context, &key, &parsed, digest) == 1 else { return nil }
        return NodeID(unchecked: serializeCompressed(key))
    }
}
