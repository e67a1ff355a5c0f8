import Crypto
import HeraldWire

/// An identity a device proves it holds by signing with its key, as Bitkit's wake gateway names
/// them: `ln:` and a Lightning node key (66 lower-case hex digits of a compressed secp256k1
/// point), or `pk:` and a Pubky Ed25519 key (52 z-base-32 characters).
///
/// The one verifier of signatures by identities: LSPS5 notifications (an `ln:` node's LN signed
/// message), Herald's identity proofs and the wake gateway's registrations.
public enum ProvenIdentity: Sendable, Hashable, CustomStringConvertible {
    case lightning(NodeID)
    case pubky([UInt8])

    /// Parses the canonical text form; nil for anything else (upper-case hex, a key off the
    /// curve, a z-base-32 spelling that is not the one its bytes encode to).
    public init?(_ text: String) {
        if text.hasPrefix("ln:") {
            let hex = String(text.dropFirst(3))
            guard hex.utf8.count == 66, hex.utf8.allSatisfy(\.isLowerHex), let node = NodeID(hex: hex) else { return nil }
            self = .lightning(node)
        } else if text.hasPrefix("pk:") {
            let z32 = String(text.dropFirst(3))
            guard z32.utf8.count == 52, let bytes = ZBase32.decode(z32), bytes.count == 32, ZBase32.encode(bytes) == z32,
                (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)) != nil
            else { return nil }
            self = .pubky(bytes)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .lightning(let node): "ln:" + node.hex
        case .pubky(let key): "pk:" + ZBase32.encode(key)
        }
    }

    /// Whether `signature` is this identity's over `message`: for `ln:` an LN signed message
    /// (zbase32 of the recoverable signature over `"Lightning Signed Message:" + message`), for
    /// `pk:` 128 hex digits of an Ed25519 signature of the message's bytes.
    public func verifies(_ signature: String, over message: String) -> Bool {
        switch self {
        case .lightning(let node):
            return LightningMessageSignature.verify(message, signature: signature, nodeID: node)
        case .pubky(let key):
            guard signature.utf8.count == 128, let bytes = [UInt8](hex: signature),
                let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key)
            else { return false }
            return publicKey.isValidSignature(bytes, for: Array(message.utf8))
        }
    }
}
