import Foundation
import HeraldBolt12
import HeraldSecp256k1
import HeraldWire
import Testing

/// BOLT 12's own vectors, copied unchanged from the `lightning/bolts` repository at commit
/// 311119388a46dfa859da3d2eda0ca836cfc5f078 (2026-03-11): `bolt12/offers-test.json` (sha256
/// d30991bb…32c7), offers valid and invalid with the records each valid one holds, and
/// `bolt12/format-string-test.json` (sha256 a88e3098…131d), case and `+` continuations.
@Suite("BOLT 12 offer vectors")
struct Bolt12VectorTests {
    struct Field: Decodable {
        var type: UInt64
        var length: Int
        var hex: String
    }

    struct OfferVector: Decodable, CustomTestStringConvertible {
        var description: String
        var valid: Bool
        var bolt12: String
        var fields: [Field]?
        var testDescription: String { description }
    }

    struct FormatVector: Decodable, CustomTestStringConvertible {
        var comment: String
        var valid: Bool
        var string: String
        var testDescription: String { comment }
    }

    static func load<T: Decodable>(_ name: String, as type: T.Type) -> T {
        // Read while the test arguments are built, where a missing resource can only trap.
        let url = Bundle.module.url(forResource: name, withExtension: "json")!
        return try! JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }

    static let offers = load("offers-test", as: [OfferVector].self)
    static let formats = load("format-string-test", as: [FormatVector].self)

    /// Why each invalid vector must be refused. Where a vector's bytes do not say what its
    /// description does, it is still refused, for the reason its bytes give:
    /// - the five blinded-path vectors lack `offer_paths`' length byte, so the stream reads as
    ///   type 16 of 2 bytes followed by type 2 (out of order) before any path is parsed;
    /// - "type > 1999999999" and "unknown even type (1000000002)" write their types after a
    ///   0xfd prefix (two bytes follow) instead of 0xfe (four), so they read as types 30517 and
    ///   15258, outside the offer ranges. The hand-written tests below cover 1000000002 itself.
    static let invalidReasons: [String: Bolt12OfferError.Reason] = [
        "Malformed: fields out of order": .outOfOrder,
        "Malformed: unknown even TLV type 78": .unknownEvenType,
        "Malformed: empty": .missingIssuerIDAndPaths,
        "Malformed: truncated at type": .truncated,
        "Malformed: truncated in length": .truncated,
        "Malformed: truncated after length": .truncated,
        "Malformed: truncated in description": .truncated,
        "Malformed: invalid offer_chains length": .invalidLength,
        "Malformed: truncated currency UTF-8": .invalidUTF8,
        "Malformed: invalid currency UTF-8": .invalidUTF8,
        "Malformed: truncated description UTF-8": .invalidUTF8,
        "Malformed: invalid description UTF-8": .invalidUTF8,
        "Malformed: truncated offer_paths": .invalidBlindedPath,
        "Malformed: zero num_hops in blinded_path": .outOfOrder,
        "Malformed: truncated onionmsg_hop in blinded_path": .outOfOrder,
        "Malformed: bad first_node_id in blinded_path": .outOfOrder,
        "Malformed: bad path_key in blinded_path": .outOfOrder,
        "Malformed: bad blinded_node_id in onionmsg_hop": .outOfOrder,
        "Malformed: truncated issuer UTF-8": .invalidUTF8,
        "Malformed: invalid issuer UTF-8": .invalidUTF8,
        "Malformed: invalid offer_issuer_id": .invalidPoint,
        "Contains type >= 80": .typeOutOfRange,
        "Contains type > 1999999999": .typeOutOfRange,
        "Contains unknown even type (1000000002)": .typeOutOfRange,
        "Contains unknown feature 122": .unknownEvenFeature,
        "Missing offer_description, but has offer_amount": .amountWithoutDescription,
        "Missing offer_amount with offer_currency": .currencyWithoutAmount,
        "Invalid: zero offer_amount": .zeroAmount,
        "Invalid: zero offer_amount with currency": .zeroAmount,
        "Missing offer_issuer_id and no offer_path": .missingIssuerIDAndPaths,
        "Second offer_path is empty": .pathWithoutHops,
        "offer_chains with zero entries": .emptyChains,
        "Bech32 padding exceeds 4-bit limit": .invalidPadding,
    ]

    @Test("the files are the ones copied: 20 valid offers, 33 invalid, 12 format strings")
    func counts() throws {
        #expect(Self.offers.filter(\.valid).count == 20)
        #expect(Self.offers.filter { !$0.valid }.count == 33)
        #expect(Self.formats.count == 12)
        // Every invalid vector has its reason: none is passed over.
        #expect(Set(Self.offers.filter { !$0.valid }.map(\.description)) == Set(Self.invalidReasons.keys))
    }

    @Test("every valid offer decodes to the vector's records and writes back to the same string", arguments: offers.filter(\.valid))
    func valid(_ vector: OfferVector) throws {
        let offer = try Bolt12Offer(vector.bolt12)
        #expect(offer.encoded == vector.bolt12.lowercased())
        let fields = try #require(vector.fields)
        #expect(offer.records.map(\.type) == fields.map(\.type))
        #expect(offer.records.map(\.value.count) == fields.map(\.length))
        #expect(offer.records.map(\.value.lowercaseHex) == fields.map { $0.hex.lowercased() })
        #expect(try Bolt12Offer(records: offer.records) == offer)
        #expect(try Bolt12Offer(vector.bolt12.uppercased()) == offer)
    }

    @Test("every invalid offer is refused, for the reason its bytes give", arguments: offers.filter { !$0.valid })
    func invalid(_ vector: OfferVector) throws {
        let reason = try #require(Self.invalidReasons[vector.description])
        let error = #expect(throws: Bolt12OfferError.self) { try Bolt12Offer(vector.bolt12) }
        #expect(error?.reason == reason, "\(String(describing: error))")
    }

    @Test("format strings: either case, '+' and whitespace joined; mixed case and misplaced '+' refused", arguments: formats)
    func format(_ vector: FormatVector) throws {
        let joined =
            "lno1pqps7sjqpgtyzm3qv4uxzmtsd3jjqer9wd3hy6tsw35k7msjzfpy7nz5yqcnygrfdej82um5wf5k2uckyypwa3eyt44h6txtxquqh7lz5djge4afgfjn7k4rgrkuag0jsd5xvxg"
        if vector.valid {
            let offer = try Bolt12Offer(vector.string)
            #expect(offer.encoded == joined)
            #expect(offer.amount == 1_000_000)
            #expect(offer.currency == nil)
        } else {
            let reason: Bolt12OfferError.Reason = vector.comment.contains("Mixed case") ? .mixedCase : .badContinuation
            let error = #expect(throws: Bolt12OfferError.self) { try Bolt12Offer(vector.string) }
            #expect(error?.reason == reason, "\(String(describing: error))")
        }
    }

    @Test("typed fields of the valid vectors")
    func typedFields() throws {
        func offer(_ description: String) throws -> Bolt12Offer {
            try Bolt12Offer(try #require(Self.offers.first { $0.description == description }).bolt12)
        }
        let minimal = try offer("Minimal bolt12 offer")
        #expect(minimal.issuerID?.hex == "02eec7245d6b7d2ccb30380bfbe2a3648cd7a942653f5aa340edcea1f283686619")
        #expect(minimal.description == nil && minimal.amount == nil && minimal.chains == nil && minimal.paths == nil)
        #expect(try offer("with description (but no amount)").description == "Test vectors")
        #expect(
            try offer("for testnet").chains?.map(\.lowercaseHex) == ["43497fd7f826957108f4a30fd9cec3aeba79972084e90ead01ea330900000000"])
        #expect(try offer("for bitcoin or liquidv1").chains?.count == 2)
        #expect(try offer("with metadata").metadata == [UInt8](repeating: 0, count: 16))
        #expect(try offer("with amount").amount == 10000)
        let currency = try offer("with currency")
        #expect(currency.currency == "USD" && currency.amount == 10000)
        #expect(try offer("with expiry").absoluteExpiry == 0x7a42_97d8)
        #expect(try offer("with issuer").issuer == "https://bolt12.org BOLT12 industries")
        #expect(try offer("with quantity").quantityMax == 5)
        #expect(try offer("with unlimited (or unknown) quantity").quantityMax == 0)
        #expect(try offer("with single quantity (weird but valid)").quantityMax == 1)
        #expect(try offer("with feature").features?.count == 13)

        let viaBob = try offer("with blinded path via Bob (0x424242...), path_key 020202...")
        let path = try #require(viaBob.paths?.first)
        #expect(viaBob.paths?.count == 1)
        let bob = try #require(NodeID(hex: "0324653eac434488002cc06bbfb7f10fe18991e35f9fe4302dbea6d2353dc0ab1c"))
        #expect(path.introduction == .node(bob))
        #expect(path.pathKey == [UInt8](repeating: 2, count: 33))
        #expect(path.hops.count == 2)
        #expect(path.hops.last?.encryptedRecipientData == [UInt8](repeating: 0x11, count: 8))

        let sciddir = try #require(try offer("same, with blinded path first_node_id using sciddir").paths?.first)
        #expect(sciddir.introduction == .channel(shortChannelID: 42, direction: 0))

        let noIssuer = try offer("with no issuer_id and blinded path via Bob (0x424242...), path_key 020202...")
        #expect(noIssuer.issuerID == nil && noIssuer.paths?.count == 1)

        let two = try offer("... and with second blinded path via 1x2x3 (direction 1), path_key 020202...")
        #expect(two.paths?.count == 2)
        #expect(two.paths?.last?.introduction == .channel(shortChannelID: 1 << 40 | 2 << 16 | 3, direction: 1))

        let odd = try offer("unknown odd field")
        #expect(odd.records.last == Bolt12Offer.Record(type: 33, value: Array("helloworld".utf8)))
        #expect(try offer("unknown odd experimental field").records.last?.type == 1_000_000_033)
    }
}
