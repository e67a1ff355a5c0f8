import HeraldBolt12
import HeraldSecp256k1
import HeraldWire
import Testing

/// What the vectors leave out: encodings written by hand, expiry, and the long offers a DNS TXT
/// record carries in several strings.
@Suite("BOLT 12 offers")
struct Bolt12OfferTests {
    static let issuerID = [UInt8](hex: "02eec7245d6b7d2ccb30380bfbe2a3648cd7a942653f5aa340edcea1f283686619")!
    static let issuer = Bolt12Offer.Record(type: 22, value: issuerID)
    static let testVectors = Bolt12Offer.Record(type: 10, value: Array("Test vectors".utf8))

    /// The offer text for raw TLV bytes, with no checks: for streams `init(records:)` cannot write.
    static func text(_ hex: String) -> String {
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        let bytes = [UInt8](hex: hex)!
        var groups: [Int] = []
        var accumulator = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                groups.append(accumulator >> bits & 31)
            }
            accumulator &= (1 << bits) - 1
        }
        if bits > 0 { groups.append(accumulator << (5 - bits) & 31) }
        return "lno1" + String(groups.map { alphabet[$0] })
    }

    static func reason(_ text: String) -> Bolt12OfferError.Reason? {
        do {
            _ = try Bolt12Offer(text)
            return nil
        } catch {
            return error.reason
        }
    }

    static func reason(_ records: [Bolt12Offer.Record]) -> Bolt12OfferError.Reason? {
        do {
            _ = try Bolt12Offer(records: records)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("the raw helper writes the minimal vector's string")
    func rawHelper() throws {
        #expect(Self.text("1621" + Self.issuerID.lowercaseHex) == "lno1zcss9mk8y3wkklfvevcrszlmu23kfrxh49px20665dqwmn4p72pksese")
    }

    @Test("the text: prefix, alphabet, padding, continuations")
    func text() {
        let minimal = "lno1zcss9mk8y3wkklfvevcrszlmu23kfrxh49px20665dqwmn4p72pksese"
        #expect(Self.reason(minimal) == nil)
        #expect(Self.reason("lnr1zcss9mk8y3wkklfvevcrszlmu23kfrxh49px20665dqwmn4p72pksese") == .notAnOffer)
        #expect(Self.reason("lno") == .notAnOffer)
        #expect(Self.reason("") == .notAnOffer)
        #expect(Self.reason("lno1zcss9mk8y3wkklfvevcrszlmu23kfrxh49px20665dqwmn4p72pksesb") == .invalidCharacter)
        #expect(Self.reason("lno1zcss9mk8y3wkklfvevcrszlmu23kfrxh49px20665dqwmn4p72pksesé") == .invalidCharacter)
        // 47 bytes in 76 groups: the last group's 3 low bits are padding. Set (`g` 01000 to
        // `f` 01001), the string would be a second spelling of the same bytes.
        let described = "lno1pgx9getnwss8vetrw3hhyuckyypwa3eyt44h6txtxquqh7lz5djge4afgfjn7k4rgrkuag0jsd5xvxg"
        #expect(Self.reason(described) == nil)
        #expect(Self.reason(String(described.dropLast()) + "f") == .invalidPadding)
        #expect(Self.reason(" " + minimal) == .badContinuation)
        #expect(Self.reason(minimal + "\n") == .badContinuation)
        #expect(Self.reason("lno1zcss9mk8y3wkklfvevc rszlmu23kfrxh49px20665dqwmn4p72pksese") == .badContinuation)
        #expect(Self.reason("lno1zcss9mk8y3wkklfvevc+\t\r\n rszlmu23kfrxh49px20665dqwmn4p72pksese") == nil)
        #expect(Self.reason("lno1zcss9mk8y3wkklfvevc+ +rszlmu23kfrxh49px20665dqwmn4p72pksese") == .badContinuation)
    }

    @Test("the TLV stream: BigSize minimal, types increasing, lengths within the data")
    func stream() {
        let issuer = "1621" + Self.issuerID.lowercaseHex
        #expect(Self.reason(Self.text(issuer)) == nil)
        // Type 22 written as 0xfd 0x0016, length 33 as 0xfd 0x0021.
        #expect(Self.reason(Self.text("fd0016" + "21" + Self.issuerID.lowercaseHex)) == .nonMinimalEncoding)
        #expect(Self.reason(Self.text("16" + "fd0021" + Self.issuerID.lowercaseHex)) == .nonMinimalEncoding)
        #expect(Self.reason(Self.text(issuer + "1621" + Self.issuerID.lowercaseHex)) == .outOfOrder)
        #expect(Self.reason(Self.text("1622" + Self.issuerID.lowercaseHex)) == .truncated)
        #expect(Self.reason(Self.text(issuer + "fe3b9a")) == .truncated)
        #expect(Self.reason(Self.text("0000" + issuer)) == .typeOutOfRange)
        #expect(Self.reason(Self.text(issuer + "fe3b9aca0000")) == .unknownEvenType)  // 1000000000
        #expect(Self.reason(Self.text(issuer + "fe3b9aca0200")) == .unknownEvenType)  // 1000000002
        #expect(Self.reason(Self.text(issuer + "fe3b9aca0100")) == nil)  // 1000000001, odd
        #expect(Self.reason(Self.text(issuer + "fe77359400" + "00")) == .typeOutOfRange)  // 2000000000
        #expect(Self.reason(Self.text(issuer + "fe773593ff" + "00")) == nil)  // 1999999999, odd
        #expect(Self.reason(Self.text(issuer + "4e00")) == .unknownEvenType)  // 78
        #expect(Self.reason(Self.text(issuer + "4f00")) == nil)  // 79
        #expect(Self.reason(Self.text(issuer + "ff000000010000000000")) == .typeOutOfRange)  // 2^32
        #expect(Self.reason(Self.text(issuer + "ff00000000773594ff00")) == .nonMinimalEncoding)  // fits in 0xfe's 4 bytes
    }

    @Test("known fields: lengths, truncated integers, points, features, paths")
    func fields() {
        let description = Self.testVectors
        func with(_ records: Bolt12Offer.Record...) -> Bolt12OfferError.Reason? {
            Self.reason((records + [Self.issuer]).sorted { $0.type < $1.type })
        }
        #expect(with(description, .init(type: 8, value: [0x27, 0x10])) == nil)
        #expect(with(description, .init(type: 8, value: [0x00, 0x27, 0x10])) == .nonMinimalEncoding)
        #expect(with(description, .init(type: 8, value: [UInt8](repeating: 1, count: 9))) == .invalidLength)
        #expect(with(description, .init(type: 8, value: [UInt8](repeating: 0xFF, count: 8))) == nil)
        #expect(with(.init(type: 14, value: [0x00])) == .nonMinimalEncoding)
        #expect(with(.init(type: 20, value: [0x00, 0x05])) == .nonMinimalEncoding)
        #expect(with(.init(type: 2, value: [UInt8](repeating: 1, count: 33))) == .invalidLength)
        #expect(with(.init(type: 2, value: [UInt8](repeating: 1, count: 64))) == nil)
        #expect(Self.reason([.init(type: 22, value: Array(Self.issuerID.dropLast()))]) == .invalidLength)
        #expect(Self.reason([.init(type: 22, value: [0x04] + Self.issuerID.dropFirst())]) == .invalidPoint)
        // Bit 1 (odd) set, then bit 0 (even), then bit 8 (even) in a second byte.
        #expect(with(.init(type: 12, value: [0x02])) == nil)
        #expect(with(.init(type: 12, value: [0x01])) == .unknownEvenFeature)
        #expect(with(.init(type: 12, value: [0x01, 0x00])) == .unknownEvenFeature)
        #expect(with(.init(type: 12, value: [0xAA, 0xAA])) == nil)
        #expect(with(.init(type: 12, value: [])) == nil)
        #expect(with(.init(type: 6, value: Array("USD".utf8))) == .currencyWithoutAmount)
        #expect(with(.init(type: 8, value: [0x01])) == .amountWithoutDescription)

        let key = Self.issuerID
        let hop = key + [0x00, 0x02, 0xAB, 0xCD]
        let path = key + key + [0x01] + hop
        #expect(Self.reason([.init(type: 16, value: path)]) == nil)
        #expect(Self.reason([.init(type: 16, value: [0x00] + [UInt8](repeating: 0, count: 8) + key + [0x01] + hop)]) == nil)
        #expect(Self.reason([.init(type: 16, value: [])]) == .emptyPaths)
        #expect(Self.reason([.init(type: 16, value: path + path)]) == nil)
        #expect(Self.reason([.init(type: 16, value: path + [0x02])]) == .invalidBlindedPath)
        #expect(Self.reason([.init(type: 16, value: [0x04] + key.dropFirst() + key + [0x01] + hop)]) == .invalidBlindedPath)
        #expect(Self.reason([.init(type: 16, value: key + key + [0x00])]) == .pathWithoutHops)
        #expect(Self.reason([.init(type: 16, value: key + key + [0x02] + hop)]) == .invalidBlindedPath)
        #expect(Self.reason([.init(type: 16, value: Array(path.dropLast()))]) == .invalidBlindedPath)
        let offCurve = [0x02] + [UInt8](repeating: 3, count: 32)
        #expect(Self.reason([.init(type: 16, value: offCurve + key + [0x01] + hop)]) == .invalidPoint)
        #expect(Self.reason([.init(type: 16, value: key + offCurve + [0x01] + hop)]) == .invalidPoint)
        #expect(Self.reason([.init(type: 16, value: key + key + [0x01] + offCurve + [0x00, 0x00])]) == .invalidPoint)
    }

    @Test("errors carry the record's type and a message")
    func errorDetail() {
        do {
            _ = try Bolt12Offer(records: [Self.testVectors, Self.issuer, .init(type: 24, value: [])])
            Issue.record("type 24 accepted")
        } catch {
            #expect(error.reason == .unknownEvenType)
            #expect(error.reason.rawValue == "unknown_even_type")
            #expect(error.type == 24)
            #expect(error.description == "invalid offer (unknown_even_type): unknown even type 24")
        }
    }

    @Test("expiry: seconds left, none for an offer that never expires, zero once reached")
    func expiry() throws {
        let offer = try Bolt12Offer(records: [Self.testVectors, .init(type: 14, value: [0x7A, 0x42, 0x97, 0xD8]), Self.issuer])
        #expect(offer.absoluteExpiry == 2_051_184_600)
        #expect(offer.secondsUntilExpiry(atUnixTime: 2_051_184_000) == 600)
        #expect(!offer.isExpired(atUnixTime: 2_051_184_599))
        #expect(offer.isExpired(atUnixTime: 2_051_184_600))
        #expect(offer.secondsUntilExpiry(atUnixTime: 3_000_000_000) == 0)
        let forever = try Bolt12Offer(records: [Self.issuer])
        #expect(forever.secondsUntilExpiry(atUnixTime: 0) == nil)
        #expect(!forever.isExpired(atUnixTime: .max))
    }

    @Test("a 566-character offer survives DNS's 255-byte strings, and '+' continuations")
    func longOffer() throws {
        let longest =
            "lno1pgx9getnwss8vetrw3hhyucsl5qj5qeyv5l2cs6y3qqzesrth7mlzrlp3xg7xhulusczm04x6g6nms9trspqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqqsqqqqqqqqqqqqqqqqqqqqqqqqqqpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqsqpqg3zyg3zyg3zygpqqqqzqqqqgqqxqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqqgqqqqqqqqqqqqqqqqqqqqqqqqqqqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgqqsg3zyg3zyg3zygtzzqhwcuj966ma9n9nqwqtl032xeyv6755yeflt235pmww58egx6rxry"
        #expect(longest.utf8.count == 566)
        let offer = try Bolt12Offer(longest)
        #expect(offer.paths?.count == 2)
        // A TXT record's strings are read back concatenated, with nothing between them.
        let strings = stride(from: 0, to: longest.count, by: 255).map { start in
            String(longest.dropFirst(start).prefix(255))
        }
        #expect(strings.map(\.utf8.count) == [255, 255, 56])
        #expect(try Bolt12Offer(strings.joined()) == offer)
        #expect(try Bolt12Offer(strings.joined(separator: "+\n")) == offer)
        #expect(try Bolt12Offer(strings.joined(separator: "+\n").uppercased()).encoded == longest)

        // Longer still: a description of 1000 characters.
        let long = try Bolt12Offer(records: [.init(type: 10, value: Array(String(repeating: "é", count: 500).utf8)), Self.issuer])
        #expect(long.encoded.utf8.count > 1600)
        #expect(long.description?.count == 500)
        #expect(try Bolt12Offer(long.encoded) == long)
    }
}
