import HeraldBolt11
import Testing

/// The checksum as an invoice carries it, and BOLT11's amount rules.
@Suite("BOLT11 checksums and amounts")
struct Bolt11AmountAndChecksumTests {
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
