import Crypto
import Foundation

/// The TSIG algorithms Herald signs with (RFC 8945 §6: both "MUST implement" or "RECOMMENDED").
public enum TSIGAlgorithm: String, Sendable, CaseIterable {
    case hmacSHA256 = "hmac-sha256"
    case hmacSHA512 = "hmac-sha512"

    /// The algorithm's name on the wire, `hmac-sha256.`.
    public var name: DNSName { try! DNSName(rawValue) }

    /// The MAC's length in bytes: Herald neither sends nor accepts truncated MACs.
    public var macLength: Int {
        switch self {
        case .hmacSHA256: SHA256.byteCount
        case .hmacSHA512: SHA512.byteCount
        }
    }

    func mac(_ data: [UInt8], secret: SymmetricKey) -> [UInt8] {
        switch self {
        case .hmacSHA256: Array(HMAC<SHA256>.authenticationCode(for: data, using: secret))
        case .hmacSHA512: Array(HMAC<SHA512>.authenticationCode(for: data, using: secret))
        }
    }

    /// Compared in constant time, so a forger learns nothing from how long a reject takes.
    func isValid(_ mac: [UInt8], for data: [UInt8], secret: SymmetricKey) -> Bool {
        switch self {
        case .hmacSHA256: HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: data, using: secret)
        case .hmacSHA512: HMAC<SHA512>.isValidAuthenticationCode(mac, authenticating: data, using: secret)
        }
    }
}

/// A shared TSIG key: its name (which the server looks it up by), algorithm and secret.
public struct TSIGKey: Sendable {
    public let name: DNSName
    public let algorithm: TSIGAlgorithm
    let secret: SymmetricKey

    public init(name: DNSName, algorithm: TSIGAlgorithm, secret: [UInt8]) {
        self.name = name
        self.algorithm = algorithm
        self.secret = SymmetricKey(data: secret)
    }

    /// The default fudge: the clock difference a server tolerates (RFC 8945 §10 recommends 300 s).
    public static let defaultFudge: UInt16 = 300

    /// `message` (a whole request, no TSIG yet) with its TSIG record appended as the last
    /// additional record, signed at `time` (seconds since 1970).
    public func sign(_ message: [UInt8], time: UInt64, fudge: UInt16 = defaultFudge) -> SignedDNSRequest {
        precondition(message.count >= 12, "a DNS message has a 12-byte header")
        let id = UInt16(message[0]) << 8 | UInt16(message[1])
        let variables = variables(time: time, fudge: fudge, error: .noError, otherData: [])
        let mac = algorithm.mac(message + variables, secret: secret)

        var signed = message
        let additionalCount = (UInt16(message[10]) << 8 | UInt16(message[11])) + 1
        signed[10] = UInt8(additionalCount >> 8)
        signed[11] = UInt8(additionalCount & 0xFF)
        let record = TSIGRecord(
            keyName: name, algorithm: algorithm.name, timeSigned: time, fudge: fudge, mac: mac, originalID: id, error: .noError,
            otherData: [])
        var writer = DNSWriter(bytes: signed)
        record.write(to: &writer)
        return SignedDNSRequest(id: id, bytes: writer.bytes, mac: mac, key: self, timeSigned: time)
    }

    /// Checks a response's TSIG record against the request it answers (RFC 8945 §5.3, §5.4):
    /// same key and algorithm, a full-length MAC over the request's MAC (behind its length), the
    /// response as it was before the TSIG record was added (its original ID, ARCOUNT one lower)
    /// and the response's TSIG variables; signed within its fudge of `now` (but for BADTIME).
    public func verify(_ response: DNSMessage, answering request: SignedDNSRequest, now: UInt64) throws(TSIGVerificationError) {
        guard let record = response.tsig, let offset = response.tsigOffset else { throw TSIGVerificationError(.unsigned) }
        guard record.keyName == name, record.algorithm == algorithm.name else {
            throw TSIGVerificationError(.keyMismatch, "\(record.keyName) \(record.algorithm)")
        }
        guard record.mac.count == algorithm.macLength else {
            throw TSIGVerificationError(.badMAC, "\(record.mac.count)-byte MAC")
        }
        var unsigned = Array(response.bytes[..<offset])
        unsigned[0] = UInt8(record.originalID >> 8)
        unsigned[1] = UInt8(record.originalID & 0xFF)
        let additionalCount = (UInt16(unsigned[10]) << 8 | UInt16(unsigned[11])) - 1
        unsigned[10] = UInt8(additionalCount >> 8)
        unsigned[11] = UInt8(additionalCount & 0xFF)
        var digest = DNSWriter()
        digest.u16(UInt16(request.mac.count))
        digest.append(request.mac)
        digest.append(unsigned)
        digest.append(variables(time: record.timeSigned, fudge: record.fudge, error: record.error, otherData: record.otherData))
        guard algorithm.isValid(record.mac, for: digest.bytes, secret: secret) else { throw TSIGVerificationError(.badMAC) }
        // A BADTIME answer carries the request's own time (Knot's does, the server's own time
        // in its other data): checked against this clock it would fail for the very reason it
        // reports. Its MAC still proves the server sent it.
        let skew = now > record.timeSigned ? now - record.timeSigned : record.timeSigned - now
        guard skew <= UInt64(record.fudge) || record.error == .badTime else {
            throw TSIGVerificationError(.timeOutOfRange, "signed at \(record.timeSigned), now \(now), fudge \(record.fudge)")
        }
    }

    /// The TSIG variables (RFC 8945 §4.3.3): key name and algorithm in canonical form, class
    /// ANY, TTL 0, time, fudge, error, other data behind its length.
    private func variables(time: UInt64, fudge: UInt16, error: DNSResponseCode, otherData: [UInt8]) -> [UInt8] {
        var writer = DNSWriter()
        writer.name(name)
        writer.u16(DNSClass.any.rawValue)
        writer.u32(0)
        writer.name(algorithm.name)
        writer.u48(time)
        writer.u16(fudge)
        writer.u16(error.rawValue)
        writer.u16(UInt16(otherData.count))
        writer.append(otherData)
        return writer.bytes
    }
}

/// A request with its TSIG record, and what checking the answer needs: its ID and MAC.
public struct SignedDNSRequest: Sendable {
    public let id: UInt16
    /// The whole message, TSIG record last.
    public let bytes: [UInt8]
    public let mac: [UInt8]
    public let key: TSIGKey
    public let timeSigned: UInt64
}

/// A TSIG record (RFC 8945 §4.2): the owner is the key's name, the rest its RDATA.
public struct TSIGRecord: Sendable, Hashable {
    public var keyName: DNSName
    public var algorithm: DNSName
    /// Seconds since 1970, 48 bits on the wire.
    public var timeSigned: UInt64
    public var fudge: UInt16
    public var mac: [UInt8]
    public var originalID: UInt16
    /// NOERROR, or BADSIG, BADKEY, BADTIME, BADTRUNC.
    public var error: DNSResponseCode
    /// Empty but in a BADTIME answer, where it holds the server's time.
    public var otherData: [UInt8]

    init(
        keyName: DNSName, algorithm: DNSName, timeSigned: UInt64, fudge: UInt16, mac: [UInt8], originalID: UInt16, error: DNSResponseCode,
        otherData: [UInt8]
    ) {
        self.keyName = keyName
        self.algorithm = algorithm
        self.timeSigned = timeSigned
        self.fudge = fudge
        self.mac = mac
        self.originalID = originalID
        self.error = error
        self.otherData = otherData
    }

    init(keyName: DNSName, reading reader: inout DNSReader, end: Int) throws(DNSMessageError) {
        self.keyName = keyName
        algorithm = try reader.name()
        timeSigned = try reader.u48()
        fudge = try reader.u16()
        mac = try reader.take(Int(try reader.u16()))
        originalID = try reader.u16()
        error = DNSResponseCode(rawValue: try reader.u16())
        otherData = try reader.take(Int(try reader.u16()))
        guard reader.offset == end else { throw DNSMessageError(.malformed, "TSIG RDATA length") }
    }

    /// The record, class ANY and TTL 0 (RFC 8945 §4.2), names uncompressed.
    func write(to writer: inout DNSWriter) {
        var rdata = DNSWriter()
        rdata.name(algorithm)
        rdata.u48(timeSigned)
        rdata.u16(fudge)
        rdata.u16(UInt16(mac.count))
        rdata.append(mac)
        rdata.u16(originalID)
        rdata.u16(error.rawValue)
        rdata.u16(UInt16(otherData.count))
        rdata.append(otherData)
        writer.record(name: keyName, type: .tsig, class: .any, ttl: 0, rdata: rdata.bytes)
    }
}

/// Why a response's TSIG record does not prove it came from the key's holder.
public typealias TSIGVerificationError = DNSError<TSIGVerificationErrorReason>

/// What is wrong with a response's signature (``TSIGVerificationError``).
public enum TSIGVerificationErrorReason: String, Sendable {
    /// No TSIG record: anyone could have sent it.
    case unsigned = "unsigned"
    /// Signed with another key or algorithm than the request.
    case keyMismatch = "key_mismatch"
    /// A MAC that is not the key's over this response.
    case badMAC = "bad_mac"
    /// Signed further from now than its fudge allows: possibly a replay.
    case timeOutOfRange = "time_out_of_range"
}
