import HeraldDNS
import Testing

/// Queries and answers against dnspython 2.8.0's bytes: `make_query(..., want_dnssec=True,
/// payload=1232, id=0xbeef)` with RD cleared, and `make_response` to it, which compresses names.
@Suite("DNS queries and answers")
struct DNSMessageTests {
    static let owner = try! DNSName("alice.user._bitcoin-payment.example.com")

    @Test("a TXT query with DO set: the question, then an OPT record of 1232 bytes and the DO bit")
    func query() {
        let query = DNSQuery(id: 0xBEEF, name: Self.owner, type: .txt, dnssec: true)
        #expect(
            hexString(query.encoded())
                == "beef0000000100000000000105616c6963650475736572105f626974636f696e2d7061796d656e74076578616d706c6503636f6d000010000100002904d0000080000000"
        )
        let plain = DNSQuery(id: 0xBEEF, name: Self.owner, type: .txt)
        #expect(plain.encoded().count == 12 + 41 + 4)
        #expect(plain.encoded()[11] == 0)
    }

    @Test("an answer with compressed names: the TXT strings, the RRSIG's type covered, AA")
    func answer() throws {
        let bytes = hex(
            "beef8400000100020000000105616c6963650475736572105f626974636f696e2d7061796d656e74076578616d706c6503636f6d0000100001c00c001000010000012c00120d626974636f696e3a3f6c6e6f3d03616263c00c002e00010000012c007000100d050000012c6b1e6b826b0be16a2f55105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00a84a66a6948e7720e210f9731820495826de603f311f63b39493b4502a4d1d12b9208829c70bea429da5402cae99abad6c8d18cae10fee1b1bae913cae8792540000292000000000000000"
        )
        let answer = try DNSMessage(parsing: bytes)
        #expect(answer.id == 0xBEEF && answer.isResponse && answer.isAuthoritative && !answer.isTruncated)
        #expect(answer.responseCode == .noError)
        #expect(answer.answers.count == 2)
        #expect(answer.answers.allSatisfy { $0.name == Self.owner && $0.ttl == 300 })
        #expect(answer.answers[0].textStrings == [Array("bitcoin:?lno=".utf8), Array("abc".utf8)])
        #expect(answer.answers[1].type == .rrsig)
        #expect(answer.answers[1].typeCovered == .txt)
        #expect(answer.answers[0].typeCovered == nil && answer.answers[1].textStrings == nil)
        #expect(answer.additional.map(\.type) == [.opt])
        #expect(answer.tsig == nil)
    }

    @Test("NXDOMAIN, and an RCODE an OPT record extends")
    func responseCodes() throws {
        let nx = try DNSMessage(
            parsing: hex(
                "beef8003000100000000000105616c6963650475736572105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00001000010000292000000000000000"
            ))
        #expect(nx.responseCode == .nameError)
        #expect(nx.answers.isEmpty)
        // The same with the OPT's extended RCODE 1: 1 << 4 | 3 = 19.
        var extended = hex(
            "beef8003000100000000000105616c6963650475736572105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00001000010000292000000000000000"
        )
        extended[extended.count - 6] = 1
        #expect(try DNSMessage(parsing: extended).responseCode.rawValue == 19)
    }

    @Test("truncated, a pointer forwards or to itself, bytes after the last record: malformed, never a crash or a loop")
    func malformed() throws {
        let query = DNSQuery(id: 1, name: Self.owner, type: .txt).encoded()
        for length in 0..<query.count {
            #expect { try DNSMessage(parsing: Array(query.prefix(length))) } throws: { ($0 as? DNSMessageError)?.reason == .truncated }
        }
        #expect { try DNSMessage(parsing: query + [0]) } throws: { ($0 as? DNSMessageError)?.reason == .malformed }
        // A question whose name is a pointer to itself (offset 12).
        let loop = hex("0001 8000 0001 0000 0000 0000 c00c 0010 0001")
        #expect { try DNSMessage(parsing: loop) } throws: { ($0 as? DNSMessageError)?.reason == .badCompressionPointer }
        let forward = hex("0001 8000 0001 0000 0000 0000 c00e 0010 0001 00")
        #expect { try DNSMessage(parsing: forward) } throws: { ($0 as? DNSMessageError)?.reason == .badCompressionPointer }
        let reserved = hex("0001 8000 0001 0000 0000 0000 4000 0010 0001")
        #expect { try DNSMessage(parsing: reserved) } throws: { ($0 as? DNSMessageError)?.reason == .badLabel }
    }

    @Test("server addresses: host, host:port, [v6]:port, bare v6; nothing else")
    func serverAddresses() {
        #expect(DNSServerAddress("ns1.example.com") == DNSServerAddress(host: "ns1.example.com", port: 53))
        #expect(DNSServerAddress("192.0.2.1:5353") == DNSServerAddress(host: "192.0.2.1", port: 5353))
        #expect(DNSServerAddress("[2001:db8::1]:53") == DNSServerAddress(host: "2001:db8::1", port: 53))
        #expect(DNSServerAddress("[2001:db8::1]") == DNSServerAddress(host: "2001:db8::1", port: 53))
        #expect(DNSServerAddress("2001:db8::1") == DNSServerAddress(host: "2001:db8::1", port: 53))
        #expect(DNSServerAddress("2001:db8::1")?.description == "[2001:db8::1]:53")
        for bad in ["", ":53", "host:", "host:0", "host:65536", "host:x", "[::1", "[]:53", "[::1]53", "a:b:c"] {
            #expect(DNSServerAddress(bad) == nil, "\(bad)")
        }
    }
}
