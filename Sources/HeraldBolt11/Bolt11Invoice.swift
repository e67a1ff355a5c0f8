import Crypto
import HeraldBech32
import HeraldSecp256k1

/// A BOLT11 invoice's content: network, amount, timestamp and tagged fields, in the order written.
///
/// ``signed(with:)`` writes it as bech32 signed with a node key; ``decode(_:)`` reads one back
/// and recovers the key that signed it.
public struct Bolt11Invoice: Sendable, Hashable {
    public var network: Bolt11Network
    /// Nil for an invoice that lets the payer choose.
    public var amountMsat: UInt64?
    /// Seconds since 1970, UTC (35 bits).
    public var timestamp: UInt64
    public var fields: [Bolt11Field]

    public init(network: Bolt11Network, amountMsat: UInt64?, timestamp: UInt64, fields: [Bolt11Field]) {
        self.network = network
        self.amountMsat = amountMsat
        self.timestamp = timestamp
        self.fields = fields
    }

    /// The payment hash (`p`), 32 bytes; nil when the invoice carries none.
    public var paymentHash: [UInt8]? {
        fields.lazy.compactMap { if case .paymentHash(let hash) = $0 { hash } else { nil } }.first
    }

    /// The description hash (`h`), 32 bytes; nil when the invoice carries a description instead.
    public var descriptionHash: [UInt8]? {
        fields.lazy.compactMap { if case .descriptionHash(let hash) = $0 { hash } else { nil } }.first
    }

    /// `ln`, the network's prefix and the amount (none for nil, and for zero, which
    /// ``signed(with:)`` refuses).
    public var humanReadablePart: String {
        "ln" + network.rawValue + (amountMsat.flatMap(Bolt11Amount.text(msat:)) ?? "")
    }

    /// The invoice text, signed with `key`: the signature is over SHA-256 of the human-readable
    /// part's bytes followed by the data part (timestamp and fields) zero-padded to whole bytes.
    public func signed(with key: NodeSecretKey) throws(Bolt11Error) -> String {
        guard amountMsat != 0 else { throw .zeroAmount }
        guard timestamp < 1 << 35 else { throw .timestampOutOfRange }
        var data = Bolt11Field.groups(timestamp)
        data.insert(contentsOf: [UInt8](repeating: 0, count: 7 - data.count), at: 0)
        for field in fields {
            guard let encoded = field.encoded else { throw .fieldTooLong(type: field.type) }
            data += encoded
        }
        let hrp = humanReadablePart
        let signature = RecoverableSignature.sign(digest: Self.digest(hrp: hrp, data: data), with: key)
        let signatureGroups = Bech32.regroup(signature.compact + [signature.recoveryID], from: 8, to: 5, pad: true)
        return Bech32.encode(hrp: hrp, data: data + signatureGroups)
    }

    /// Reads `text` (either case), checks its checksum and fields, and recovers the node id
    /// that signed it; when the invoice names its payee (`n`) the signature must recover to it.
    public static func decode(_ text: String) throws(Bolt11Error) -> (invoice: Bolt11Invoice, payee: NodeID) {
        let decoded: (hrp: String, data: [UInt8])
        do {
            decoded = try Bech32.decode(text)
        } catch {
            throw .bech32(error)
        }
        let (hrp, groups) = decoded
        guard hrp.hasPrefix("ln") else { throw .unknownPrefix }
        let afterLn = hrp.dropFirst(2)
        // Longest prefix first: `bcrt` before `bc`, `tbs` before `tb`.
        guard
            let network = Bolt11Network.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
                .first(where: { afterLn.hasPrefix($0.rawValue) })
        else { throw .unknownPrefix }
        let amountText = afterLn.dropFirst(network.rawValue.count)
        var amountMsat: UInt64?
        if !amountText.isEmpty {
            guard let msat = Bolt11Amount.msat(text: amountText) else { throw .badAmount }
            amountMsat = msat
        }

        guard groups.count >= 7 + 104 else { throw .tooShort }
        let data = Array(groups.dropLast(104))
        let timestamp = data[..<7].reduce(UInt64(0)) { $0 << 5 | UInt64($1) }
        var fields: [Bolt11Field] = []
        var index = 7
        while index < data.count {
            guard index + 3 <= data.count else { throw .tooShort }
            let type = data[index]
            let length = Int(data[index + 1]) << 5 | Int(data[index + 2])
            index += 3
            guard index + length <= data.count else { throw .tooShort }
            fields.append(try Bolt11Field(type: type, data: Array(data[index..<(index + length)])))
            index += length
        }

        let signatureBytes = Bech32.regroup(groups.suffix(104), from: 5, to: 8, pad: false)
        guard let signature = RecoverableSignature(compact: signatureBytes[..<64], recoveryID: signatureBytes[64]),
            let payee = signature.recoverNodeID(digest: digest(hrp: hrp, data: data))
        else { throw .badSignature }
        for case .payee(let named) in fields where named != payee { throw .badSignature }
        return (Bolt11Invoice(network: network, amountMsat: amountMsat, timestamp: timestamp, fields: fields), payee)
    }

    static func digest(hrp: String, data: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array(hrp.utf8) + Bech32.regroup(data, from: 5, to: 8, pad: true)))
    }
}

/// The currency prefixes of BOLT11's human-readable part.
public enum Bolt11Network: String, Sendable, Hashable, CaseIterable {
    case bitcoin = "bc"
    case testnet = "tb"
    case signet = "tbs"
    case regtest = "bcrt"
}

/// Why an invoice cannot be written or read.
public enum Bolt11Error: Error, Hashable {
    case zeroAmount
    case timestampOutOfRange
    case fieldTooLong(type: UInt8)
    case bech32(Bech32.DecodingError)
    case unknownPrefix
    case badAmount
    case tooShort
    case badField(type: UInt8)
    case badSignature
}
