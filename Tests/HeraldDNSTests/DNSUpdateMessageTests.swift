import HeraldDNS
import Testing

/// An UPDATE for `alice.user._bitcoin-payment.example.com`, from dnspython 2.8.0's renderer with
/// name compression off (Herald never compresses), so the bytes come from an implementation
/// other than the one under test; dnspython also checked the TSIG of what it wrote.
enum UpdateVectors {
    static let zone = try! DNSName("_bitcoin-payment.example.com")
    static let owner = try! DNSName("alice.user._bitcoin-payment.example.com")
    static let secret = [UInt8](0..<32)
    static let time: UInt64 = 1_700_000_000

    static let message = try! DNSUpdateMessage(
        id: 0x1234, zone: zone,
        updates: [
            .deleteRRset(name: owner, type: .txt),
            .addTXT(name: owner, ttl: 3600, strings: [try! DNSCharacterString("bitcoin:?lno=lno1qsgqq"), try! DNSCharacterString("x")]),
        ])

    /// The message without TSIG, section by section.
    static let unsigned = hex(
        // ID 0x1234; QR 0, OPCODE 5 (0x2800); ZOCOUNT 1, PRCOUNT 0, UPCOUNT 2, ADCOUNT 0.
        "1234 2800 0001 0000 0002 0000"
            // Zone: _bitcoin-payment.example.com, type SOA, class IN.
            + "105f626974636f696e2d7061796d656e74 076578616d706c65 03636f6d 00 0006 0001"
            // Delete the TXT RRset: owner, type TXT, class ANY, TTL 0, RDLENGTH 0.
            + "05616c696365 0475736572 105f626974636f696e2d7061796d656e74 076578616d706c65 03636f6d 00 0010 00ff 00000000 0000"
            // Add TXT: owner, type TXT, class IN, TTL 3600, RDLENGTH 25, "bitcoin:?lno=lno1qsgqq" "x".
            + "05616c696365 0475736572 105f626974636f696e2d7061796d656e74 076578616d706c65 03636f6d 00 0010 0001 00000e10 0019"
            + "16 626974636f696e3a3f6c6e6f3d6c6e6f3171736771 71 01 78")

    /// TSIG with HMAC-SHA256: owner herald-test., type TSIG, class ANY, TTL 0, RDLENGTH 61;
    /// algorithm hmac-sha256., time 1700000000 (0x00006553f100), fudge 300, MAC size 32, MAC,
    /// original ID, error 0, other length 0.
    static let sha256TSIG = hex(
        "0b686572616c642d74657374 00 00fa 00ff 00000000 003d 0b686d61632d736861323536 00 00006553f100 012c 0020"
            + "139bc1ecbbd1ea2dfacb1c4e07c257aa60d6dc70d0a5796c8efa065e3ea78913 1234 0000 0000")
    static let sha256MAC = hex("139bc1ecbbd1ea2dfacb1c4e07c257aa60d6dc70d0a5796c8efa065e3ea78913")

    static let sha512TSIG = hex(
        "0b686572616c642d74657374 00 00fa 00ff 00000000 005d 0b686d61632d736861353132 00 00006553f100 012c 0040"
            + "9a7d0e71661a8be7da4f55aac1a5ce420f2e0009997559a6a9010424a24798ab80138393b8ce04e9aa98d59b61399288a591ade5bdb5c8fb0056f223ca342902"
            + "1234 0000 0000")
    static let sha512MAC = hex(
        "9a7d0e71661a8be7da4f55aac1a5ce420f2e0009997559a6a9010424a24798ab80138393b8ce04e9aa98d59b61399288a591ade5bdb5c8fb0056f223ca342902")

    /// The signed message: ADCOUNT 1, TSIG last.
    static func signed(_ tsig: [UInt8]) -> [UInt8] {
        var bytes = unsigned
        bytes[11] = 1
        return bytes + tsig
    }

    static func key(_ algorithm: TSIGAlgorithm, name: String = "herald-test", secret: [UInt8] = secret) -> TSIGKey {
        TSIGKey(name: try! DNSName(name), algorithm: algorithm, secret: secret)
    }
}

@Suite("RFC 2136 UPDATE messages")
struct DNSUpdateMessageTests {
    @Test("zone, empty prerequisites, delete the TXT RRset, add TXT: byte for byte")
    func unsignedBytes() {
        #expect(hexString(UpdateVectors.message.encoded()) == hexString(UpdateVectors.unsigned))
    }

    @Test("signed with HMAC-SHA256: the TSIG record appended last, ADCOUNT 1, as dnspython signs it")
    func signedSHA256() {
        let signed = UpdateVectors.key(.hmacSHA256).sign(UpdateVectors.message.encoded(), time: UpdateVectors.time)
        #expect(hexString(signed.bytes) == hexString(UpdateVectors.signed(UpdateVectors.sha256TSIG)))
        #expect(signed.mac == UpdateVectors.sha256MAC)
        #expect(signed.id == 0x1234)
    }

    @Test("signed with HMAC-SHA512, as dnspython signs it")
    func signedSHA512() {
        let signed = UpdateVectors.key(.hmacSHA512).sign(UpdateVectors.message.encoded(), time: UpdateVectors.time)
        #expect(hexString(signed.bytes) == hexString(UpdateVectors.signed(UpdateVectors.sha512TSIG)))
        #expect(signed.mac == UpdateVectors.sha512MAC)
    }

    @Test("the MAC covers the secret, the time and the message")
    func macDependsOnEverything() {
        let message = UpdateVectors.message.encoded()
        let mac = UpdateVectors.key(.hmacSHA256).sign(message, time: UpdateVectors.time).mac
        #expect(UpdateVectors.key(.hmacSHA256, secret: [UInt8](1...32)).sign(message, time: UpdateVectors.time).mac != mac)
        #expect(UpdateVectors.key(.hmacSHA256).sign(message, time: UpdateVectors.time + 1).mac != mac)
        #expect(UpdateVectors.key(.hmacSHA256, name: "herald-other").sign(message, time: UpdateVectors.time).mac != mac)
        var changed = message
        changed[changed.count - 1] ^= 1
        #expect(UpdateVectors.key(.hmacSHA256).sign(changed, time: UpdateVectors.time).mac != mac)
    }

    @Test("a 566-byte URI becomes three character-strings: 255, 255 and 56 bytes, in order")
    func splitsText() throws {
        let uri = KnotUpdateTests.uri566
        #expect(uri.utf8.count == 566)
        let strings = try TXTRecord.characterStrings(for: uri)
        #expect(strings.map(\.bytes.count) == [255, 255, 56])
        #expect(strings.flatMap(\.bytes) == Array(uri.utf8))
        #expect(TXTRecord.rdata(strings).count == 569)
        #expect(TXTRecord.rdata(strings)[0] == 255 && TXTRecord.rdata(strings)[256] == 255 && TXTRecord.rdata(strings)[512] == 56)
        #expect(try TXTRecord.characterStrings(for: String(repeating: "a", count: 255)).map(\.bytes.count) == [255])
        #expect(try TXTRecord.characterStrings(for: String(repeating: "a", count: 256)).map(\.bytes.count) == [255, 1])
    }

    @Test("replaceTXT is the delete and the add in one message; deleteTXT the delete alone")
    func replaceAndDelete() throws {
        let replace = try DNSUpdateMessage.replaceTXT(
            zone: UpdateVectors.zone, name: UpdateVectors.owner, ttl: 3600, text: "bitcoin:?lno=lno1qsgqqx", id: 0x1234)
        // dnspython's vector splits the same text after 22 bytes; the rest is the same message.
        #expect(
            replace.updates == [
                .deleteRRset(name: UpdateVectors.owner, type: .txt),
                .addTXT(name: UpdateVectors.owner, ttl: 3600, strings: [try DNSCharacterString("bitcoin:?lno=lno1qsgqqx")]),
            ])
        let delete = try DNSUpdateMessage.deleteTXT(zone: UpdateVectors.zone, name: UpdateVectors.owner, id: 0x1234)
        let expected = UpdateVectors.unsigned.prefix(12 + 34 + 51)
        var withOneUpdate = Array(expected)
        withOneUpdate[9] = 1
        #expect(hexString(delete.encoded()) == hexString(withOneUpdate))
    }

    @Test("4,000 bytes of text are accepted, 4,001 are text_too_long")
    func textLimit() throws {
        let longest = "bitcoin:?lno=" + String(repeating: "q", count: 4000 - 13)
        let message = try DNSUpdateMessage.replaceTXT(zone: UpdateVectors.zone, name: UpdateVectors.owner, ttl: 3600, text: longest)
        // 16 character-strings; the whole signed message far below 65,535 bytes.
        #expect(message.encoded().count < 4400)
        #expect {
            try DNSUpdateMessage.replaceTXT(zone: UpdateVectors.zone, name: UpdateVectors.owner, ttl: 3600, text: longest + "q")
        } throws: { ($0 as? DNSMessageError)?.reason == .textTooLong }
        #expect { try TXTRecord.characterStrings(for: "") } throws: { ($0 as? DNSMessageError)?.reason == .emptyText }
    }

    @Test("what the server would refuse is refused here first")
    func refusals() throws {
        #expect { try DNSCharacterString(String(repeating: "a", count: 256)) } throws: {
            ($0 as? DNSMessageError)?.reason == .characterStringTooLong
        }
        #expect {
            try DNSUpdateMessage(zone: UpdateVectors.zone, updates: [.deleteRRset(name: try DNSName("alice.example.com"), type: .txt)])
        } throws: { ($0 as? DNSMessageError)?.reason == .nameOutsideZone }
        #expect { try DNSUpdateMessage(zone: UpdateVectors.zone, updates: []) } throws: { ($0 as? DNSMessageError)?.reason == .noUpdates }
        #expect {
            try DNSUpdateMessage(zone: UpdateVectors.zone, updates: [.addTXT(name: UpdateVectors.owner, ttl: 60, strings: [])])
        } throws: { ($0 as? DNSMessageError)?.reason == .emptyText }
        // 300 records of 250 bytes: over what one message can carry.
        let strings = [try DNSCharacterString(String(repeating: "a", count: 250))]
        #expect {
            try DNSUpdateMessage(
                zone: UpdateVectors.zone, updates: Array(repeating: .addTXT(name: UpdateVectors.owner, ttl: 60, strings: strings), count: 300))
        } throws: { ($0 as? DNSMessageError)?.reason == .messageTooLarge }
    }
}
