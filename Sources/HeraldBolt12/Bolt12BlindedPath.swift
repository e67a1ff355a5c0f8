import HeraldSecp256k1

/// A blinded path (BOLT 4) as an offer lists it in `offer_paths`: where it enters the network,
/// the key the introduction node shares a secret with, and the blinded hops after it.
public struct Bolt12BlindedPath: Sendable, Hashable {
    /// BOLT 1's `sciddir_or_pubkey`: the introduction node by its key, or as one end of a channel.
    public enum Introduction: Sendable, Hashable {
        case node(NodeID)
        /// `direction` 0 is the channel announcement's `node_id_1`, 1 its `node_id_2`.
        case channel(shortChannelID: UInt64, direction: UInt8)
    }

    public struct Hop: Sendable, Hashable {
        /// A compressed secp256k1 point (33 bytes), the hop's node id as blinded.
        public let blindedNodeID: [UInt8]
        public let encryptedRecipientData: [UInt8]
    }

    /// `first_node_id`.
    public let introduction: Introduction
    /// `first_path_key`: a compressed secp256k1 point (33 bytes).
    public let pathKey: [UInt8]
    /// At least one.
    public let hops: [Hop]

    /// Every path in `value`, one after another to its end.
    static func list(_ value: [UInt8], type: UInt64) throws(Bolt12OfferError) -> [Bolt12BlindedPath] {
        var reader = Reader(bytes: value, type: type)
        var paths: [Bolt12BlindedPath] = []
        while !reader.atEnd { paths.append(try reader.path()) }
        return paths
    }

    private struct Reader {
        let bytes: [UInt8]
        let type: UInt64
        var index = 0

        var atEnd: Bool { index == bytes.count }

        func fail(_ reason: Bolt12OfferError.Reason, _ message: String) -> Bolt12OfferError {
            Bolt12OfferError(reason, message, type: type)
        }

        mutating func take(_ count: Int, _ what: String) throws(Bolt12OfferError) -> [UInt8] {
            guard bytes.count - index >= count else { throw fail(.invalidBlindedPath, "a blinded path ends inside its \(what)") }
            defer { index += count }
            return Array(bytes[index..<(index + count)])
        }

        mutating func point(_ what: String) throws(Bolt12OfferError) -> [UInt8] {
            let bytes = try take(33, what)
            guard NodeID(bytes: bytes) != nil else { throw fail(.invalidPoint, "a blinded path's \(what) is not a secp256k1 point") }
            return bytes
        }

        mutating func path() throws(Bolt12OfferError) -> Bolt12BlindedPath {
            let first = try take(1, "first_node_id")[0]
            let introduction: Introduction
            switch first {
            case 0, 1:
                let scid = try take(8, "first_node_id").reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                introduction = .channel(shortChannelID: scid, direction: first)
            case 2, 3:
                index -= 1
                guard let node = NodeID(bytes: try take(33, "first_node_id")) else {
                    throw fail(.invalidPoint, "a blinded path's first_node_id is not a secp256k1 point")
                }
                introduction = .node(node)
            default:
                throw fail(.invalidBlindedPath, "a blinded path's first_node_id starts with \(first), neither a direction (0, 1) nor a point (2, 3)")
            }
            let pathKey = try point("first_path_key")
            let count = try take(1, "num_hops")[0]
            guard count > 0 else { throw fail(.pathWithoutHops, "a blinded path with no hops") }
            var hops: [Hop] = []
            for _ in 0..<count {
                let blinded = try point("blinded_node_id")
                let length = try take(2, "enclen").reduce(0) { $0 << 8 | Int($1) }
                hops.append(Hop(blindedNodeID: blinded, encryptedRecipientData: try take(length, "encrypted_recipient_data")))
            }
            return Bolt12BlindedPath(introduction: introduction, pathKey: pathKey, hops: hops)
        }
    }
}
