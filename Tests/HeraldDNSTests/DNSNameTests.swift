import HeraldDNS
import Testing

@Suite("DNS names")
struct DNSNameTests {
    @Test("a name's wire form is its labels behind their lengths, then the root's zero")
    func wire() throws {
        #expect(try DNSName("ab.c").wire == [2, 0x61, 0x62, 1, 0x63, 0])
        #expect(try DNSName("ab.c.") == DNSName("ab.c"))
        #expect(try DNSName("alice.user._bitcoin-payment.example.com").labels.count == 5)
        #expect(try DNSName(".").wire == [0])
        #expect(try DNSName("alice.user._bitcoin-payment.example.com").description == "alice.user._bitcoin-payment.example.com.")
    }

    @Test("the limits: 63-byte labels, 255-byte names")
    func limits() throws {
        let label63 = String(repeating: "a", count: 63)
        #expect(try DNSName(label63 + ".com").wire.count == 1 + 63 + 1 + 3 + 1)
        #expect(throws: DNSNameError(.labelTooLong, name: label63 + "a.com")) { try DNSName(label63 + "a.com") }
        // Four 63-byte labels and one of 61: 4 × 64 + 62 + 1 = 319 bytes, over 255.
        let long = [label63, label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(throws: DNSNameError(.nameTooLong, name: long)) { try DNSName(long) }
        // Three 63-byte labels and one of 61: 3 × 64 + 62 + 1 = 255 bytes exactly.
        let longest = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(try DNSName(longest).wireLength == 255)
        #expect(throws: DNSNameError(.nameTooLong, name: longest + "b")) { try DNSName(longest + "b") }
    }

    @Test("only lower-case letters, digits, - and _; no empty labels")
    func characters() {
        #expect(throws: DNSNameError(.notLowercase, name: "Alice.example.com")) { try DNSName("Alice.example.com") }
        #expect(throws: DNSNameError(.invalidCharacter, name: "al ice.example.com")) { try DNSName("al ice.example.com") }
        #expect(throws: DNSNameError(.invalidCharacter, name: "alicé.example.com")) { try DNSName("alicé.example.com") }
        #expect(throws: DNSNameError(.emptyLabel, name: "alice..com")) { try DNSName("alice..com") }
        #expect(throws: DNSNameError(.emptyLabel, name: ".com")) { try DNSName(".com") }
        #expect(throws: DNSNameError(.empty, name: "")) { try DNSName("") }
    }

    @Test("a name is in a zone when the zone's labels end it")
    func subdomain() throws {
        let zone = try DNSName("_bitcoin-payment.example.com")
        #expect(try DNSName("alice.user._bitcoin-payment.example.com").isSubdomain(of: zone))
        #expect(zone.isSubdomain(of: zone))
        #expect(try !DNSName("alice.user.example.com").isSubdomain(of: zone))
        #expect(try !DNSName("x_bitcoin-payment.example.com").isSubdomain(of: zone))
    }
}
