import CSecp256k1
import HeraldWire

/// The one libsecp256k1 context of the process, randomized once against side channels.
///
/// libsecp256k1 documents a context as safe to share between threads for every call that takes
/// it `const` (signing, recovery, key derivation, serialization); only randomizing, cloning and
/// destroying it mutate, and nothing does that after this initializer. Hence `nonisolated(unsafe)`.
nonisolated(unsafe) public let secp256k1Context: OpaquePointer = {
    guard let context = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
        fatalError("libsecp256k1 could not create a context")
    }
    var generator = SystemRandomNumberGenerator()
    let seed = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    guard secp256k1_context_randomize(context, seed) == 1 else {
        fatalError("libsecp256k1 could not randomize its context")
    }
    return context
}()

/// A Lightning node id: a secp256k1 public key, 33 bytes compressed.
public struct NodeID: Sendable, Hashable, CustomStringConvertible {
    /// The compressed key: `02` or `03`, then the 32-byte x coordinate.
    public let bytes: [UInt8]

    /// Nil unless `bytes` is a compressed point on the curve.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == 33, bytes[0] == 0x02 || bytes[0] == 0x03 else { return nil }
        var key = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_parse(secp256k1Context, &key, bytes, bytes.count) == 1 else { return nil }
        self.bytes = bytes
    }

    /// From 66 hex digits, either case.
    public init?(hex: String) {
        guard hex.utf8.count == 66, let bytes = [UInt8](hex: hex) else { return nil }
        self.init(bytes: bytes)
    }

    package init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Lower-case hex, as node ids are usually written.
    public var hex: String { bytes.lowercaseHex }

    public var description: String { hex }
}

/// A node's secret key: 32 bytes, a non-zero scalar below the curve order.
public struct NodeSecretKey: Sendable, CustomStringConvertible {
    package let bytes: [UInt8]

    /// Never the key itself: a key interpolated into a log line must not leak.
    public var description: String { "NodeSecretKey(\(nodeID))" }

    /// Nil unless `bytes` is a valid secp256k1 secret key.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == 32, secp256k1_ec_seckey_verify(secp256k1Context, bytes) == 1 else { return nil }
        self.bytes = bytes
    }

    /// From 64 hex digits, either case.
    public init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = [UInt8](hex: hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The node id this key signs as.
    public var nodeID: NodeID {
        var key = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_create(secp256k1Context, &key, bytes) == 1 else {
            fatalError("libsecp256k1 refused a secret key it had accepted")
        }
        return NodeID(unchecked: serializeCompressed(key))
    }
}

/// A public key as 33 compressed bytes.
func serializeCompressed(_ key: secp256k1_pubkey) -> [UInt8] {
    var key = key
    var output = [UInt8](repeating: 0, count: 33)
    var length = output.count
    _ = secp256k1_ec_pubkey_serialize(secp256k1Context, &output, &length, &key, UInt32(SECP256K1_EC_COMPRESSED))
    return output
}
