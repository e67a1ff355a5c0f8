import CSecp256k1

extension NodeSecretKey {
    /// ECDH as Bitkit's wake envelopes do it: `d · P` serialized compressed, 33 bytes (the
    /// `shared_secret_point` of rust-secp256k1, compressed), not libsecp256k1's hashed `ecdh`.
    public func sharedPoint(with publicKey: NodeID) -> [UInt8] {
        var point = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_parse(secp256k1Context, &point, publicKey.bytes, publicKey.bytes.count) == 1,
            secp256k1_ec_pubkey_tweak_mul(secp256k1Context, &point, bytes) == 1
        else {
            // Both were checked when made: a valid scalar times a point on the curve is on it.
            fatalError("libsecp256k1 refused a key it had accepted")
        }
        return serializeCompressed(point)
    }
}
