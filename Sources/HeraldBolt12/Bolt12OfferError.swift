/// Why a string is not a BOLT 12 offer: ``reason`` for code (its raw value is a stable
/// snake_case word an API can return), ``message`` for people, ``type`` for the TLV record at
/// fault when there is one.
public struct Bolt12OfferError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        /// Not `lno1` followed by data.
        case notAnOffer = "not_an_offer"
        /// A `+` not between two characters (first, last, or doubled), or whitespace that does
        /// not follow a `+`.
        case badContinuation = "bad_continuation"
        /// Upper- and lower-case letters together.
        case mixedCase = "mixed_case"
        /// A character outside bech32's alphabet after the `1`.
        case invalidCharacter = "invalid_character"
        /// Five or more bits left over after the last whole byte, or left-over bits that are not zero.
        case invalidPadding = "invalid_padding"
        /// A type, length or value that runs past the end of the data.
        case truncated
        /// A BigSize type or length, or a truncated integer, written with more bytes than it needs.
        case nonMinimalEncoding = "non_minimal_encoding"
        /// A type not greater than the one before it (repeated types included).
        case outOfOrder = "out_of_order"
        /// A type outside the offer ranges 1–79 and 1000000000–1999999999.
        case typeOutOfRange = "type_out_of_range"
        /// An even type this reader does not know, which it must not ignore.
        case unknownEvenType = "unknown_even_type"
        /// A known type whose length its encoding does not allow.
        case invalidLength = "invalid_length"
        /// A text field that is not UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// A public key that is not a compressed secp256k1 point.
        case invalidPoint = "invalid_point"
        /// An `offer_paths` entry that does not parse as a blinded path.
        case invalidBlindedPath = "invalid_blinded_path"
        /// A blinded path with no hops.
        case pathWithoutHops = "path_without_hops"
        /// `offer_paths` present with no path in it.
        case emptyPaths = "empty_paths"
        /// `offer_chains` present with no chain in it.
        case emptyChains = "empty_chains"
        /// An even `offer_features` bit set: no offer feature is defined, so every even bit is unknown.
        case unknownEvenFeature = "unknown_even_feature"
        /// `offer_amount` of zero.
        case zeroAmount = "zero_amount"
        /// `offer_amount` without `offer_description`.
        case amountWithoutDescription = "amount_without_description"
        /// `offer_currency` without `offer_amount`.
        case currencyWithoutAmount = "currency_without_amount"
        /// Neither `offer_issuer_id` nor `offer_paths`: nobody to ask for an invoice.
        case missingIssuerIDAndPaths = "missing_issuer_id_and_paths"
    }

    public let reason: Reason
    public let message: String
    /// The TLV type of the record at fault; nil for faults of the text or of the offer as a whole.
    public let type: UInt64?

    public init(_ reason: Reason, _ message: String, type: UInt64? = nil) {
        self.reason = reason
        self.message = message
        self.type = type
    }

    public var description: String { "invalid offer (\(reason.rawValue)): \(message)" }
}
