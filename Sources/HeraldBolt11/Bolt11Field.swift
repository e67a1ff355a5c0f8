import HeraldBech32
import HeraldSecp256k1

/// A tagged field of a BOLT11 invoice: a 5-bit type, a 10-bit length in 5-bit groups, the data.
public enum Bolt11Field: Sendable, Hashable {
    /// `p`: SHA-256 of the preimage that proves payment, 32 bytes.
    case paymentHash([UInt8])
    /// `s`: the payment secret that keeps forwarding nodes from probing the payee, 32 bytes.
    case paymentSecret([UInt8])
    /// `d`: a short description, UTF-8.
    case description(String)
    /// `h`: SHA-256 of a description carried elsewhere (LNURL's metadata), 32 bytes.
    case descriptionHash([UInt8])
    /// `n`: the payee's node id, when the writer spares the reader the key recovery.
    case payee(NodeID)
    /// `x`: seconds after the timestamp during which the invoice may be paid (default 3600).
    case expiry(UInt64)
    /// `c`: the smallest CLTV delta the payee accepts on the last HTLC (default 18).
    case minFinalCLTVExpiryDelta(UInt64)
    /// `9`: the feature bits set (BOLT 9 numbering: even required, odd optional).
    case features(Set<Int>)
    /// Any other field (route hints `r`, fallback addresses `f`, metadata `m`, …), as 5-bit groups.
    case other(type: UInt8, data: [UInt8])

    /// The type as BOLT11 numbers it; its bech32 letter is ``Bech32`` 's alphabet at that index.
    public var type: UInt8 {
        switch self {
        case .paymentHash: 1
        case .paymentSecret: 16
        case .description: 13
        case .descriptionHash: 23
        case .payee: 19
        case .expiry: 6
        case .minFinalCLTVExpiryDelta: 24
        case .features: 5
        case .other(let type, _): type
        }
    }

    /// The data as 5-bit groups, padded with zero bits; integers and feature vectors without
    /// leading zero groups, as BOLT11 requires of their writers.
    var data: [UInt8] {
        switch self {
        case .paymentHash(let bytes), .paymentSecret(let bytes), .descriptionHash(let bytes):
            return Bech32.regroup(bytes, from: 8, to: 5, pad: true)
        case .description(let text): return Bech32.regroup(text.utf8, from: 8, to: 5, pad: true)
        case .payee(let node): return Bech32.regroup(node.bytes, from: 8, to: 5, pad: true)
        case .expiry(let value), .minFinalCLTVExpiryDelta(let value): return Self.groups(value)
        case .features(let bits):
            // Bit n sits in the n/5-th group from the end; negative numbers name no bit.
            let bits = bits.filter { $0 >= 0 }
            guard let highest = bits.max() else { return [] }
            var groups = [UInt8](repeating: 0, count: highest / 5 + 1)
            for bit in bits { groups[groups.count - 1 - bit / 5] |= 1 << UInt8(bit % 5) }
            return groups
        case .other(_, let data): return data
        }
    }

    /// Type, length and data as 5-bit groups; nil when the data is longer than 1023 groups.
    var encoded: [UInt8]? {
        let data = self.data
        guard data.count < 1024 else { return nil }
        return [type, UInt8(data.count >> 5), UInt8(data.count & 31)] + data
    }

    /// The field of `type` with `data`; throws for a fixed-length field of the wrong length,
    /// a description that is not UTF-8 or an integer too long to hold.
    init(type: UInt8, data: [UInt8]) throws(Bolt11Error) {
        func bytes(count: Int, groups: Int) throws(Bolt11Error) -> [UInt8] {
            guard data.count == groups else { throw .badField(type: type) }
            return Array(Bech32.regroup(data, from: 5, to: 8, pad: false).prefix(count))
        }
        switch type {
        case 1: self = .paymentHash(try bytes(count: 32, groups: 52))
        case 16: self = .paymentSecret(try bytes(count: 32, groups: 52))
        case 23: self = .descriptionHash(try bytes(count: 32, groups: 52))
        case 19:
            guard let node = NodeID(bytes: try bytes(count: 33, groups: 53)) else { throw .badField(type: type) }
            self = .payee(node)
        case 13:
            guard let text = String(validating: Bech32.regroup(data, from: 5, to: 8, pad: false), as: UTF8.self) else {
                throw .badField(type: type)
            }
            self = .description(text)
        case 6, 24:
            guard data.count <= 12 else { throw .badField(type: type) }
            let value = data.reduce(UInt64(0)) { $0 << 5 | UInt64($1) }
            self = type == 6 ? .expiry(value) : .minFinalCLTVExpiryDelta(value)
        case 5:
            var bits = Set<Int>()
            for (index, group) in data.reversed().enumerated() {
                for bit in 0..<5 where group >> UInt8(bit) & 1 == 1 { bits.insert(index * 5 + bit) }
            }
            self = .features(bits)
        default: self = .other(type: type, data: data)
        }
    }

    /// `value` big-endian in 5-bit groups, none for zero.
    static func groups(_ value: UInt64) -> [UInt8] {
        var groups: [UInt8] = []
        var rest = value
        while rest > 0 {
            groups.insert(UInt8(rest & 31), at: 0)
            rest >>= 5
        }
        return groups
    }
}
