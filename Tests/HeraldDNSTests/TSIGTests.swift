import HeraldDNS
import Testing

/// dnspython 2.8.0's `make_response` to ``UpdateVectors``' requests, signed one second later
/// (1700000001) with the request's MAC: the answers a server gives, from another implementation.
enum ResponseVectors {
    static let sha256 = hex(
        // ID 0x1234; QR 1, OPCODE 5, RCODE 0 (0xa800); ZOCOUNT 1, the rest 0 but ADCOUNT 1.
        "1234 a800 0001 0000 0000 0001 105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00 0006 0001"
            + "0b686572616c642d7465737400 00fa 00ff 00000000 003d 0b686d61632d73686132353600 00006553f101 012c 0020"
            + "98f7593d1c5b504155a9c612df72855281afcf747a87b9aba15bf105c06c8835 1234 0000 0000")
    static let sha512 = hex(
        "1234 a800 0001 0000 0000 0001 105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00 0006 0001"
            + "0b686572616c642d7465737400 00fa 00ff 00000000 005d 0b686d61632d73686135313200 00006553f101 012c 0040"
            + "6ed0dcf2cc9d7f9faeaabf6be66573122468ea4e045af42ad5513a7a0ddc2c30c4d89237edff6f5a5af8de198d4078b5c10c7d79936366fa4737fbce31bc6b6f"
            + "1234 0000 0000")
    /// A server that does not know the key: NOTAUTH in the header, BADKEY in an unsigned TSIG
    /// record (MAC size 0), by hand after RFC 8945 §5.2.1.
    static let badKey = hex(
        "1234 a809 0001 0000 0000 0001 105f626974636f696e2d7061796d656e74076578616d706c6503636f6d00 0006 0001"
            + "0b686572616c642d7465737400 00fa 00ff 00000000 001d 0b686d61632d73686132353600 00006553f101 012c 0000"
            + "1234 0011 0000")
}

@Suite("RFC 8945 TSIG")
struct TSIGTests {
    static func request(_ algorithm: TSIGAlgorithm) -> SignedDNSRequest {
        UpdateVectors.key(algorithm).sign(UpdateVectors.message.encoded(), time: UpdateVectors.time)
    }

    @Test("a response signed by dnspython verifies, with either algorithm", arguments: [TSIGAlgorithm.hmacSHA256, .hmacSHA512])
    func verifiesResponse(algorithm: TSIGAlgorithm) throws {
        let bytes = algorithm == .hmacSHA256 ? ResponseVectors.sha256 : ResponseVectors.sha512
        let response = try DNSMessage(parsing: bytes)
        #expect(response.id == 0x1234)
        #expect(response.isResponse)
        #expect(response.opcode == .update)
        #expect(response.responseCode == .noError)
        #expect(response.questions == [DNSQuestion(name: UpdateVectors.zone, type: .soa, rrClass: .internet)])
        #expect(response.additional.isEmpty)
        let tsig = try #require(response.tsig)
        #expect(tsig.keyName == (try DNSName("herald-test")))
        #expect(tsig.algorithm == algorithm.name)
        #expect(tsig.timeSigned == 1_700_000_001)
        #expect(tsig.fudge == 300)
        #expect(tsig.mac.count == algorithm.macLength)
        try UpdateVectors.key(algorithm).verify(response, answering: Self.request(algorithm), now: 1_700_000_001)
    }

    @Test("a changed byte, another request's MAC, another key or secret: each fails to verify")
    func rejectsForgeries() throws {
        let key = UpdateVectors.key(.hmacSHA256)
        let request = Self.request(.hmacSHA256)
        // The header's RCODE turned to REFUSED.
        var changed = ResponseVectors.sha256
        changed[3] = 0x05
        #expect(throws: TSIGVerificationError(.badMAC)) {
            try key.verify(try DNSMessage(parsing: changed), answering: request, now: 1_700_000_001)
        }
        // The same answer to a request signed a second later: the request MAC is covered.
        let other = key.sign(UpdateVectors.message.encoded(), time: UpdateVectors.time + 1)
        #expect(throws: TSIGVerificationError(.badMAC)) {
            try key.verify(try DNSMessage(parsing: ResponseVectors.sha256), answering: other, now: 1_700_000_001)
        }
        #expect(throws: TSIGVerificationError(.badMAC)) {
            try UpdateVectors.key(.hmacSHA256, secret: [UInt8](1...32))
                .verify(try DNSMessage(parsing: ResponseVectors.sha256), answering: request, now: 1_700_000_001)
        }
        #expect {
            try UpdateVectors.key(.hmacSHA512).verify(try DNSMessage(parsing: ResponseVectors.sha256), answering: request, now: 1_700_000_001)
        } throws: { ($0 as? TSIGVerificationError)?.reason == .keyMismatch }
        #expect {
            try UpdateVectors.key(.hmacSHA256, name: "herald-other")
                .verify(try DNSMessage(parsing: ResponseVectors.sha256), answering: request, now: 1_700_000_001)
        } throws: { ($0 as? TSIGVerificationError)?.reason == .keyMismatch }
    }

    @Test("signed further than the fudge from now: time_out_of_range; within it: fine")
    func time() throws {
        let key = UpdateVectors.key(.hmacSHA256)
        let response = try DNSMessage(parsing: ResponseVectors.sha256)
        try key.verify(response, answering: Self.request(.hmacSHA256), now: 1_700_000_001 + 300)
        try key.verify(response, answering: Self.request(.hmacSHA256), now: 1_700_000_001 - 300)
        #expect { try key.verify(response, answering: Self.request(.hmacSHA256), now: 1_700_000_001 + 301) } throws: {
            ($0 as? TSIGVerificationError)?.reason == .timeOutOfRange
        }
    }

    @Test("an answer without TSIG is unsigned; BADKEY is read from the TSIG record's error")
    func unsignedAndErrors() throws {
        // The sha256 answer without its TSIG record, ADCOUNT 0.
        var bare = Array(ResponseVectors.sha256.prefix(12 + 34))
        bare[11] = 0
        let response = try DNSMessage(parsing: bare)
        #expect(response.tsig == nil)
        #expect(throws: TSIGVerificationError(.unsigned)) {
            try UpdateVectors.key(.hmacSHA256).verify(response, answering: Self.request(.hmacSHA256), now: 1_700_000_001)
        }
        let badKey = try DNSMessage(parsing: ResponseVectors.badKey)
        #expect(badKey.headerResponseCode == .notAuth)
        #expect(badKey.responseCode == .badKey)
        #expect(badKey.tsig?.mac == [])
        #expect(badKey.tsig?.error.description == "BADKEY")
    }
}
