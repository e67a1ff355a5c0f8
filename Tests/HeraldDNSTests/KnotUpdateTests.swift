import Foundation
import HeraldDNS
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// UPDATEs against a real Knot DNS server that signs its zone (KnotServer): what Herald
/// publishes is there, signed, as soon as the client returns; a wrong key and a stopped server
/// come back as what they are.
@Suite("UPDATE against Knot DNS", .serialized, .enabled(if: KnotServer.isAvailable, "needs knotd: apt-get install knot"))
struct KnotUpdateTests {
    /// A BIP-353 URI of 566 bytes: `bitcoin:?lno=` and a 553-character bech32-looking offer.
    static let uri566: String = {
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l")
        return "bitcoin:?lno=lno1" + String((0..<549).map { alphabet[($0 * 7 + $0 / 32) % 32] })
    }()

    static let owner = try! DNSName("alice.user._bitcoin-payment.example.com")
    static let timeout = Duration.seconds(5)

    /// A server, its key as read from the key file it wrote, and a client; the server stopped after.
    static func withKnot(
        keyAlgorithm: String = "hmac-sha256", _ body: (KnotServer, TSIGKey, DNSClient) async throws -> Void
    ) async throws {
        let knot = try await KnotServer.start(keyAlgorithm: keyAlgorithm)
        do {
            let key = try BINDKeyFile.parse(try String(contentsOf: knot.keyFile, encoding: .utf8))
            try await body(knot, key, DNSClient())
        } catch {
            Issue.record("knotd's log:\n\(knot.log)")
            await knot.stop()
            throw error
        }
        await knot.stop()
    }

    /// The TXT records at `name` as the server answers them with DNSSEC: each record's
    /// character-strings, and whether an RRSIG covering TXT came with them.
    static func read(_ name: DNSName, from knot: KnotServer) async throws -> (rcode: DNSResponseCode, texts: [[[UInt8]]], signed: Bool) {
        let answer = try await DNSClient().query(name, type: .txt, dnssec: true, server: knot.address, timeout: timeout)
        #expect(answer.isAuthoritative)
        let texts = answer.answers.filter { $0.type == .txt && $0.name == name }.compactMap(\.textStrings)
        return (answer.responseCode, texts, answer.answers.contains { $0.typeCovered == .txt })
    }

    static func zone(_ knot: KnotServer) -> DNSName { try! DNSName(knot.zone) }

    @Test("a 566-byte URI is published as one TXT record of three character-strings, signed, as soon as update returns")
    func publish() async throws {
        try await Self.withKnot { knot, key, client in
            let message = try DNSUpdateMessage.replaceTXT(zone: Self.zone(knot), name: Self.owner, ttl: 3600, text: Self.uri566)
            let started = ContinuousClock.now
            let result = try await client.update(message, key: key, server: knot.address, timeout: Self.timeout)
            let elapsed = ContinuousClock.now - started
            #expect(result == .success)
            let read = try await Self.read(Self.owner, from: knot)
            #expect(read.rcode == .noError)
            #expect(read.texts.count == 1)
            #expect(read.texts.first?.map(\.count) == [255, 255, 56])
            #expect(read.texts.first?.joined().elementsEqual(Self.uri566.utf8) == true)
            #expect(read.signed)
            print("knot: UPDATE answered in \(elapsed)")
        }
    }

    @Test(
        "dnspython validates the TXT record's RRSIG with the zone's DNSKEYs, and rejects it over another text",
        .enabled("needs dnspython: pip install dnspython") { await DNSSECCheck.isAvailable() })
    func dnssecValidates() async throws {
        try await Self.withKnot { knot, key, client in
            let message = try DNSUpdateMessage.replaceTXT(zone: Self.zone(knot), name: Self.owner, ttl: 3600, text: Self.uri566)
            #expect(try await client.update(message, key: key, server: knot.address, timeout: Self.timeout) == .success)
            let check = try await DNSSECCheck.run(knot: knot, owner: Self.owner)
            #expect(check.texts == [hexString(Array(Self.uri566.utf8))])
            // ECDSA P-256 with SHA-256, Knot's default.
            #expect(check.algorithm == 13)
            #expect(!check.signers.isEmpty)
            #expect(check.forgedValidates == false)
        }
    }

    @Test("replace: a delete and an add in one UPDATE leave exactly one TXT record, the new one")
    func replace() async throws {
        try await Self.withKnot { knot, key, client in
            let zone = Self.zone(knot)
            let first = try DNSUpdateMessage.replaceTXT(zone: zone, name: Self.owner, ttl: 3600, text: "bitcoin:?lno=lno1first")
            #expect(try await client.update(first, key: key, server: knot.address, timeout: Self.timeout) == .success)
            // Two records at once, so "exactly one afterwards" means the delete took them all.
            let second = try DNSUpdateMessage(
                zone: zone,
                updates: [.addTXT(name: Self.owner, ttl: 3600, strings: [try DNSCharacterString("bitcoin:?lno=lno1second")])])
            #expect(try await client.update(second, key: key, server: knot.address, timeout: Self.timeout) == .success)
            #expect(try await Self.read(Self.owner, from: knot).texts.count == 2)

            let replacement = try DNSUpdateMessage.replaceTXT(zone: zone, name: Self.owner, ttl: 3600, text: Self.uri566)
            #expect(try await client.update(replacement, key: key, server: knot.address, timeout: Self.timeout) == .success)
            let read = try await Self.read(Self.owner, from: knot)
            #expect(read.texts.count == 1)
            #expect(read.texts.first?.joined().elementsEqual(Self.uri566.utf8) == true)
            #expect(read.signed)
        }
    }

    @Test("delete: the name has no TXT record afterwards (NXDOMAIN, or NODATA)")
    func delete() async throws {
        try await Self.withKnot { knot, key, client in
            let zone = Self.zone(knot)
            let publish = try DNSUpdateMessage.replaceTXT(zone: zone, name: Self.owner, ttl: 3600, text: Self.uri566)
            #expect(try await client.update(publish, key: key, server: knot.address, timeout: Self.timeout) == .success)
            #expect(try await Self.read(Self.owner, from: knot).texts.count == 1)
            let delete = try DNSUpdateMessage.deleteTXT(zone: zone, name: Self.owner)
            #expect(try await client.update(delete, key: key, server: knot.address, timeout: Self.timeout) == .success)
            let read = try await Self.read(Self.owner, from: knot)
            #expect(read.texts.isEmpty)
            #expect(read.rcode == .nameError || read.rcode == .noError)
            // Deleting what is not there is no error: a retried delete succeeds.
            #expect(try await client.update(delete, key: key, server: knot.address, timeout: Self.timeout) == .success)
        }
    }

    @Test("hmac-sha512 keys work end to end, the answer's TSIG verified with them")
    func sha512() async throws {
        try await Self.withKnot(keyAlgorithm: "hmac-sha512") { knot, key, client in
            #expect(key.algorithm == .hmacSHA512)
            let message = try DNSUpdateMessage.replaceTXT(zone: Self.zone(knot), name: Self.owner, ttl: 3600, text: Self.uri566)
            #expect(try await client.update(message, key: key, server: knot.address, timeout: Self.timeout) == .success)
            #expect(try await Self.read(Self.owner, from: knot).texts.count == 1)
        }
    }

    @Test("a wrong secret is BADSIG, an unknown key BADKEY, a skewed clock BADTIME: permanent, nothing published")
    func wrongKeys() async throws {
        try await Self.withKnot { knot, key, client in
            let message = try DNSUpdateMessage.replaceTXT(zone: Self.zone(knot), name: Self.owner, ttl: 3600, text: Self.uri566)
            let wrongSecret = TSIGKey(name: key.name, algorithm: key.algorithm, secret: [UInt8](repeating: 7, count: 32))
            let badSignature = try await client.update(message, key: wrongSecret, server: knot.address, timeout: Self.timeout)
            #expect(badSignature == .badSignature)
            #expect(!badSignature.isRetryable)
            #expect(badSignature.reason == "badsig")

            let unknown = TSIGKey(name: try DNSName("someone-else"), algorithm: key.algorithm, secret: [UInt8](repeating: 7, count: 32))
            let badKey = try await client.update(message, key: unknown, server: knot.address, timeout: Self.timeout)
            #expect(badKey == .badKey)
            #expect(!badKey.isRetryable)

            // Signed an hour ago: Knot answers BADTIME, and signs that answer, which the client checks.
            let skewed = key.sign(message.encoded(), time: UInt64(Date().timeIntervalSince1970) - 3600)
            let badTime = try await client.update(signed: skewed, server: knot.address, timeout: Self.timeout)
            #expect(badTime == .badTime)
            #expect(!badTime.isRetryable)

            #expect(try await Self.read(Self.owner, from: knot).texts.isEmpty)
        }
    }

    @Test("knotd stopped: a connection failure, retryable; started again, the same UPDATE publishes, and earlier records survived")
    func serverDown() async throws {
        try await Self.withKnot { knot, key, client in
            let zone = Self.zone(knot)
            let other = try DNSName("bob.user._bitcoin-payment.example.com")
            let before = try DNSUpdateMessage.replaceTXT(zone: zone, name: other, ttl: 3600, text: "bitcoin:?lno=lno1bob")
            #expect(try await client.update(before, key: key, server: knot.address, timeout: Self.timeout) == .success)

            await knot.pause()
            let message = try DNSUpdateMessage.replaceTXT(zone: zone, name: Self.owner, ttl: 3600, text: Self.uri566)
            do {
                let result = try await client.update(message, key: key, server: knot.address, timeout: Self.timeout)
                Issue.record("a stopped server answered \(result)")
            } catch let error as DNSClientError {
                #expect(error.reason == .connectionFailed)
                #expect(error.isRetryable)
            }

            try await knot.resume()
            #expect(try await client.update(message, key: key, server: knot.address, timeout: Self.timeout) == .success)
            #expect(try await Self.read(Self.owner, from: knot).signed)
            #expect(try await Self.read(other, from: knot).texts == [[Array("bitcoin:?lno=lno1bob".utf8)]])
        }
    }

    @Test("a server that takes the connection and never answers: timed_out, retryable, within the timeout")
    func silentServer() async throws {
        // A listening socket nobody accepts on: the kernel completes the handshake, then nothing.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(listen(fd, 8) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let server = DNSServerAddress(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
        let key = UpdateVectors.key(.hmacSHA256)
        let started = ContinuousClock.now
        do {
            let result = try await DNSClient().update(UpdateVectors.message, key: key, server: server, timeout: .milliseconds(300))
            Issue.record("a silent server answered \(result)")
        } catch {
            #expect(error.reason == .timedOut)
            #expect(error.isRetryable)
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3))
    }
}

/// A DNS server over TCP that answers each connection from a script: for the answers no real
/// server gives on purpose (unsigned successes, forged MACs, other IDs, silence then a close).
/// Blocking sockets on a thread of its own, off Swift's cooperative pool.
final class ScriptedDNSServer: Sendable {
    let port: Int
    private let fd: Int32

    /// `answer` gets each request and returns the bytes to send back, nil to close instead.
    init(answer: @escaping @Sendable ([UInt8]) -> [UInt8]?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw KnotServerError(message: "no listening socket") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                defer { close(connection) }
                func read(_ count: Int) -> [UInt8]? {
                    var bytes = [UInt8](repeating: 0, count: count)
                    var done = 0
                    while done < count {
                        let got = bytes.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + done, count - done, 0) }
                        guard got > 0 else { return nil }
                        done += got
                    }
                    return bytes
                }
                guard let prefix = read(2), let request = read(Int(prefix[0]) << 8 | Int(prefix[1])) else { continue }
                guard let response = answer(request) else { continue }
                let framed = [UInt8(response.count >> 8), UInt8(response.count & 0xFF)] + response
                _ = framed.withUnsafeBytes { send(connection, $0.baseAddress!, framed.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    var address: DNSServerAddress { DNSServerAddress(host: "127.0.0.1", port: port) }

    /// Stops accepting: the thread's `accept` fails and it ends.
    func stop() { shutdown(fd, Int32(SHUT_RDWR)) }
}

@Suite("The client against answers a real server does not give")
struct ScriptedAnswerTests {
    static let request = UpdateVectors.key(.hmacSHA256).sign(UpdateVectors.message.encoded(), time: UpdateVectors.time)

    static func outcome(_ answer: @escaping @Sendable ([UInt8]) -> [UInt8]?) async throws -> Result<DNSUpdateResult, DNSClientError> {
        let server = try ScriptedDNSServer(answer: answer)
        defer { server.stop() }
        do {
            return .success(try await DNSClient().update(signed: Self.request, server: server.address, timeout: .seconds(5)))
        } catch {
            return .failure(error)
        }
    }

    @Test("an unsigned NOERROR is unsigned_response; an unsigned REFUSED is reported as refused")
    func unsigned() async throws {
        var bare = Array(ResponseVectors.sha256.prefix(12 + 34))
        bare[11] = 0
        let success = bare
        #expect(try await Self.outcome { _ in success } == .failure(DNSClientError(.unsignedResponse)))
        var refused = bare
        refused[3] = 0x05
        let answer = refused
        #expect(try await Self.outcome { _ in answer } == .success(.refused))
    }

    @Test("dnspython's answer signed at 1700000001 is out of time now; with a changed byte its MAC fails: bad_response_signature")
    func badSignature() async throws {
        let stale = try await Self.outcome { _ in ResponseVectors.sha256 }
        guard case .failure(let error) = stale else {
            Issue.record("\(stale)")
            return
        }
        #expect(error.reason == .badResponseSignature)
        #expect(error.detail.hasPrefix("time_out_of_range"))
        #expect(!error.isRetryable)
        var forged = ResponseVectors.sha256
        forged[forged.count - 10] ^= 1
        let answer = forged
        let bad = try await Self.outcome { _ in answer }
        guard case .failure(let error) = bad else {
            Issue.record("\(bad)")
            return
        }
        #expect(error.reason == .badResponseSignature)
        #expect(error.detail.hasPrefix("bad_mac"))
    }

    @Test("another ID, the request echoed back, a close without an answer, garbage")
    func strayAnswers() async throws {
        var otherID = ResponseVectors.sha256
        otherID[1] = 0x35
        let answer = otherID
        #expect(try await Self.outcome { _ in answer }.failureReason == .unexpectedResponse)
        #expect(try await Self.outcome { $0 }.failureReason == .unexpectedResponse)
        let closed = try await Self.outcome { _ in nil }
        #expect(closed.failureReason == .connectionClosed)
        #expect(closed.isRetryableFailure)
        #expect(try await Self.outcome { _ in [0x12, 0x34, 0xA8] }.failureReason == .malformedResponse)
    }
}

extension Result where Success == DNSUpdateResult, Failure == DNSClientError {
    var failureReason: DNSClientError.Reason? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }

    var isRetryableFailure: Bool {
        if case .failure(let error) = self { return error.isRetryable }
        return false
    }
}
