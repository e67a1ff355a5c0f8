import HeraldBolt11
import Testing

/// BIP-173's test vectors for the checksum, and BOLT11's amount rules.
@Suite("Bech32 checksums and BOLT11 amounts")
struct Bech32Tests {
    @Test(
        "BIP-173's valid strings decode and re-encode unchanged",
        arguments: [
            "A12UEL5L", "a12uel5l",
            "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
            "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
            "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
            "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", "?1ezyfcl",
        ]
    )
    func valid(_ text: String) throws {
        let (hrp, data) = try Bech32.decode(text)
        #expect(Bech32.encode(hrp: hrp, data: data) == text.lowercased())
    }

    @Test(
        "BIP-173's invalid strings are refused for the right reason",
        arguments: [
            ("10a06t8", Bech32.DecodingError.noSeparator),  // empty human-readable part
            ("1qzzfhee", .noSeparator),
            ("pzry9x0s0muk", .noSeparator),
            ("x1b4n0q5v", .invalidCharacter),
            ("li1dgmt3", .tooShort),
            ("A1G7SGD8", .badChecksum),  // checksum computed over upper-case letters
            ("A12uEL5L", .mixedCase),
            ("a12uel5m", .badChecksum),
        ] as [(String, Bech32.DecodingError)]
    )
    func invalid(_ text: String, _ reason: Bech32.DecodingError) {
        #expect(throws: reason) { try Bech32.decode(text) }
    }

    @Test("every single-character change of an invoice breaks its checksum")
    func flippedCharacter() throws {
        let text = Bolt11VectorTests.examples[1].text
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        var characters = Array(text)
        let separator = try #require(characters.lastIndex(of: "1"))
        for index in stride(from: separator + 1, to: characters.count, by: 7) {
            let original = characters[index]
            characters[index] = alphabet.first { $0 != original }!
            #expect(throws: Bolt11Error.bech32(.badChecksum)) { try Bolt11Invoice.decode(String(characters)) }
            characters[index] = original
        }
    }

    @Test(
        "amounts use the largest multiplier that keeps the number whole",
        arguments: [
            (UInt64(100_000_000_000), "1"), (250_000_000, "2500u"), (2_000_000_000, "20m"), (967_878_534, "9678785340p"),
            (1, "10p"), (100, "1n"), (21_000, "210n"), (1_000, "10n"), (5_000_000, "50u"), (100_000, "1u"),
            (2_100_000_000_000_000_000, "21000000"), (1_799_999_999_999_999_999, "17999999999999999990p"),
        ] as [(UInt64, String)]
    )
    func amountText(_ msat: UInt64, _ text: String) {
        #expect(Bolt11Amount.text(msat: msat) == text)
        #expect(Bolt11Amount.msat(text: text) == msat)
    }

    @Test("zero has no amount text")
    func zeroAmount() {
        #expect(Bolt11Amount.text(msat: 0) == nil)
    }

    @Test(
        "amount readers take any multiplier and refuse what BOLT11 forbids",
        arguments: [
            ("2500000n", UInt64(250_000_000)), ("25000m", 2_500_000_000_000), ("1p", nil), ("11p", nil), ("0", nil),
            ("01u", nil), ("1x", nil), ("u", nil), ("", nil), ("-1m", nil), ("184467440737095516160p", nil), ("200000000", nil),
            ("1 m", nil),
        ] as [(String, UInt64?)]
    )
    func amountReading(_ text: String, _ msat: UInt64?) {
        #expect(Bolt11Amount.msat(text: text) == msat)
    }
}
