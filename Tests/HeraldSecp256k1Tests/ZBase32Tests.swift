import HeraldSecp256k1
import Testing

@Suite("z-base-32")
struct ZBase32Tests {
    /// Known encodings (the ones LDK's zbase32 module is tested against).
    static let vectors: [(String, [UInt8])] = [
        ("", []),
        ("yy", [0x00]),
        ("oy", [0x80]),
        ("tqrey", [0x8B, 0x88, 0x80]),
        ("6n9hq", [0xF0, 0xBF, 0xC7]),
        ("4t7ye", [0xD4, 0x7A, 0x04]),
        ("6im5sdy", [0xF5, 0x57, 0xBB, 0x0C]),
        (
            "ybndrfg8ejkmcpqxot1uwisza345h769",
            [
                0x00, 0x44, 0x32, 0x14, 0xC7, 0x42, 0x54, 0xB6, 0x35, 0xCF, 0x84, 0x65, 0x3A, 0x56, 0xD7, 0xC6,
                0x75, 0xBE, 0x77, 0xDF,
            ]
        ),
    ]

    @Test("known vectors encode and decode", arguments: vectors)
    func vector(_ text: String, _ bytes: [UInt8]) {
        #expect(ZBase32.encode(bytes) == text)
        #expect(ZBase32.decode(text) == bytes)
    }

    @Test("every length from 0 to 70 bytes round-trips")
    func roundTrips() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let text = ZBase32.encode(bytes)
            #expect(text.count == (length * 8 + 4) / 5)
            #expect(ZBase32.decode(text) == bytes)
        }
    }

    @Test(
        "characters outside the alphabet, impossible lengths and stray padding bits are refused",
        arguments: ["00", "l1", "?", "=", "y", "yyy", "YY", "yb", "o y", "yé"])
    func refused(_ text: String) {
        #expect(ZBase32.decode(text) == nil)
    }
}
