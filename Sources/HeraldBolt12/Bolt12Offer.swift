import HeraldSecp256k1

/// A BOLT 12 offer (`lno1…`), read and checked as a reader must before acting on it: the text
/// form (case, `+` continuations, bech32 groups with no checksum), the TLV stream (BOLT 1), each
/// known field's encoding and the offer's own requirements.
///
/// It does not judge what depends on the reader's node or the clock: which chains it accepts,
/// and whether ``absoluteExpiry`` has passed (see ``isExpired(atUnixTime:)``).
public struct Bolt12Offer: Sendable, Hashable {
    /// One TLV record as it was in the offer.
    public struct Record: Sendable, Hashable {
        public let type: UInt64
        public let value: [UInt8]

        public init(type: UInt64, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// The human-readable prefix of offers.
    public static let prefix = "lno"

    /// The offer in lower case with its continuations joined: the form to store and publish.
    public let encoded: String
    /// Every record in order, unknown odd types included, so the offer can be written back whole.
    public let records: [Record]

    /// `offer_chains`: 32-byte chain hashes, at least one; nil means bitcoin only.
    public let chains: [[UInt8]]?
    /// `offer_metadata`, opaque to everyone but the issuer.
    public let metadata: [UInt8]?
    /// `offer_currency`: an ISO 4217 code that ``amount`` is in; nil when it is in msat.
    public let currency: String?
    /// `offer_amount`, per item, greater than zero.
    public let amount: UInt64?
    /// `offer_description`.
    public let description: String?
    /// `offer_features`, as written (big-endian bitmap); only odd bits can be set.
    public let features: [UInt8]?
    /// `offer_absolute_expiry`: seconds since 1970, UTC, from which no invoice should be requested.
    public let absoluteExpiry: UInt64?
    /// `offer_paths`: at least one.
    public let paths: [Bolt12BlindedPath]?
    /// `offer_issuer`.
    public let issuer: String?
    /// `offer_quantity_max`: 0 means no known maximum.
    public let quantityMax: UInt64?
    /// `offer_issuer_id`.
    public let issuerID: NodeID?

    /// Reads `text`, upper or lower case, split with `+` (and whitespace after it) or not.
    public init(_ text: String) throws(Bolt12OfferError) {
        let encoded = try Bolt12String.normalize(text)
        let bytes = try Bolt12String.bytes(encoded, hrp: Self.prefix)
        let records = try TLVStream.records(bytes) { (type) throws(Bolt12OfferError) in
            guard (1...79).contains(type) || (1_000_000_000...1_999_999_999).contains(type) else {
                throw Bolt12OfferError(.typeOutOfRange, "type \(type) is outside 1–79 and 1000000000–1999999999", type: type)
            }
            guard Self.knownTypes.contains(type) || !type.isMultiple(of: 2) else {
                throw Bolt12OfferError(.unknownEvenType, "unknown even type \(type)", type: type)
            }
        }
        self.encoded = encoded
        self.records = records

        var chains: [[UInt8]]?
        var metadata: [UInt8]?
        var currency: String?
        var amount: UInt64?
        var description: String?
        var features: [UInt8]?
        var absoluteExpiry: UInt64?
        var paths: [Bolt12BlindedPath]?
        var issuer: String?
        var quantityMax: UInt64?
        var issuerID: NodeID?
        for record in records {
            let value = record.value
            let type = record.type
            switch type {
            case 2:
                guard !value.isEmpty else { throw Bolt12OfferError(.emptyChains, "offer_chains lists no chain", type: type) }
                guard value.count.isMultiple(of: 32) else {
                    throw Bolt12OfferError(.invalidLength, "offer_chains is \(value.count) bytes, not 32-byte hashes", type: type)
                }
                chains = stride(from: 0, to: value.count, by: 32).map { Array(value[$0..<($0 + 32)]) }
            case 4: metadata = value
            case 6: currency = try Self.text(value, "offer_currency", type: type)
            case 8: amount = try Self.truncatedInteger(value, "offer_amount", type: type)
            case 10: description = try Self.text(value, "offer_description", type: type)
            case 12:
                // Bit 0 is the last byte's lowest bit. No feature is defined for offers, so
                // every even bit is one a reader does not know and must not ignore.
                for (offset, byte) in value.enumerated().reversed() {
                    guard let bit = [0, 2, 4, 6].first(where: { byte & (1 << $0) != 0 }) else { continue }
                    let number = (value.count - 1 - offset) * 8 + bit
                    throw Bolt12OfferError(.unknownEvenFeature, "offer_features sets unknown even bit \(number)", type: type)
                }
                features = value
            case 14: absoluteExpiry = try Self.truncatedInteger(value, "offer_absolute_expiry", type: type)
            case 16:
                let list = try Bolt12BlindedPath.list(value, type: type)
                guard !list.isEmpty else { throw Bolt12OfferError(.emptyPaths, "offer_paths lists no path", type: type) }
                paths = list
            case 18: issuer = try Self.text(value, "offer_issuer", type: type)
            case 20: quantityMax = try Self.truncatedInteger(value, "offer_quantity_max", type: type)
            case 22:
                guard value.count == 33 else {
                    throw Bolt12OfferError(.invalidLength, "offer_issuer_id is \(value.count) bytes, not 33", type: type)
                }
                guard let id = NodeID(bytes: value) else {
                    throw Bolt12OfferError(.invalidPoint, "offer_issuer_id is not a secp256k1 point", type: type)
                }
                issuerID = id
            default: break  // An odd type this reader does not know: kept in `records`, otherwise ignored.
            }
        }

        if let amount {
            guard amount > 0 else { throw Bolt12OfferError(.zeroAmount, "offer_amount is zero", type: 8) }
            guard description != nil else {
                throw Bolt12OfferError(.amountWithoutDescription, "offer_amount is set without offer_description")
            }
        }
        guard currency == nil || amount != nil else {
            throw Bolt12OfferError(.currencyWithoutAmount, "offer_currency is set without offer_amount")
        }
        guard issuerID != nil || paths != nil else {
            throw Bolt12OfferError(.missingIssuerIDAndPaths, "neither offer_issuer_id nor offer_paths is set")
        }

        self.chains = chains
        self.metadata = metadata
        self.currency = currency
        self.amount = amount
        self.description = description
        self.features = features
        self.absoluteExpiry = absoluteExpiry
        self.paths = paths
        self.issuer = issuer
        self.quantityMax = quantityMax
        self.issuerID = issuerID
    }

    /// Writes `records` in order as an offer and reads it back, so the result is checked exactly
    /// as a received offer is.
    public init(records: [Record]) throws(Bolt12OfferError) {
        try self.init(Bolt12String.encode(hrp: Self.prefix, bytes: TLVStream.encode(records)))
    }

    /// Seconds from `unixTime` to ``absoluteExpiry``: 0 once it is reached, nil for an offer that
    /// does not expire.
    public func secondsUntilExpiry(atUnixTime unixTime: UInt64) -> UInt64? {
        absoluteExpiry.map { $0 > unixTime ? $0 - unixTime : 0 }
    }

    /// Whether ``absoluteExpiry`` is at or before `unixTime`: from then on no invoice should be
    /// requested for it.
    public func isExpired(atUnixTime unixTime: UInt64) -> Bool {
        secondsUntilExpiry(atUnixTime: unixTime) == 0
    }

    static let knownTypes: Set<UInt64> = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]

    static func text(_ value: [UInt8], _ name: String, type: UInt64) throws(Bolt12OfferError) -> String {
        guard let text = String(validating: value, as: UTF8.self) else {
            throw Bolt12OfferError(.invalidUTF8, "\(name) is not UTF-8", type: type)
        }
        return text
    }

    /// A `tu64`: big-endian in at most 8 bytes, with no leading zero byte (zero is no bytes).
    static func truncatedInteger(_ value: [UInt8], _ name: String, type: UInt64) throws(Bolt12OfferError) -> UInt64 {
        guard value.count <= 8 else { throw Bolt12OfferError(.invalidLength, "\(name) is \(value.count) bytes, at most 8", type: type) }
        guard value.first != 0 else {
            throw Bolt12OfferError(.nonMinimalEncoding, "\(name) starts with a zero byte", type: type)
        }
        return value.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
