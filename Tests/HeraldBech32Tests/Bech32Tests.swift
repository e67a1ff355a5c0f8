import HeraldBech32
import Testing

/// BIP-173's test vectors for the checksum.
@Suite("Bech32 checksums")
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
}
