/// A record type (RFC 1035 §3.2.2 and later), open so answers can carry any type.
public struct DNSRecordType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let ns = DNSRecordType(rawValue: 2)
    public static let soa = DNSRecordType(rawValue: 6)
    public static let txt = DNSRecordType(rawValue: 16)
    public static let opt = DNSRecordType(rawValue: 41)
    public static let rrsig = DNSRecordType(rawValue: 46)
    public static let nsec = DNSRecordType(rawValue: 47)
    public static let dnskey = DNSRecordType(rawValue: 48)
    public static let tsig = DNSRecordType(rawValue: 250)

    public var description: String {
        switch self {
        case .ns: "NS"
        case .soa: "SOA"
        case .txt: "TXT"
        case .opt: "OPT"
        case .rrsig: "RRSIG"
        case .nsec: "NSEC"
        case .dnskey: "DNSKEY"
        case .tsig: "TSIG"
        default: "TYPE\(rawValue)"
        }
    }
}

/// A record class; in UPDATE, NONE and ANY say what to delete (RFC 2136 §2.5).
public struct DNSClass: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let internet = DNSClass(rawValue: 1)
    public static let none = DNSClass(rawValue: 254)
    public static let any = DNSClass(rawValue: 255)
}

/// A response code: the header's four bits, or one of TSIG's (RFC 8945 §3) from the TSIG
/// record's error field, which a 4-bit header cannot hold.
public struct DNSResponseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let noError = DNSResponseCode(rawValue: 0)
    public static let formatError = DNSResponseCode(rawValue: 1)
    public static let serverFailure = DNSResponseCode(rawValue: 2)
    public static let nameError = DNSResponseCode(rawValue: 3)
    public static let notImplemented = DNSResponseCode(rawValue: 4)
    public static let refused = DNSResponseCode(rawValue: 5)
    public static let yxDomain = DNSResponseCode(rawValue: 6)
    public static let yxRRset = DNSResponseCode(rawValue: 7)
    public static let nxRRset = DNSResponseCode(rawValue: 8)
    public static let notAuth = DNSResponseCode(rawValue: 9)
    public static let notZone = DNSResponseCode(rawValue: 10)
    public static let badSignature = DNSResponseCode(rawValue: 16)
    public static let badKey = DNSResponseCode(rawValue: 17)
    public static let badTime = DNSResponseCode(rawValue: 18)
    public static let badTruncation = DNSResponseCode(rawValue: 22)

    /// The mnemonic of the RFCs (`NOERROR`, `SERVFAIL`, `BADSIG`).
    public var description: String {
        switch self {
        case .noError: "NOERROR"
        case .formatError: "FORMERR"
        case .serverFailure: "SERVFAIL"
        case .nameError: "NXDOMAIN"
        case .notImplemented: "NOTIMP"
        case .refused: "REFUSED"
        case .yxDomain: "YXDOMAIN"
        case .yxRRset: "YXRRSET"
        case .nxRRset: "NXRRSET"
        case .notAuth: "NOTAUTH"
        case .notZone: "NOTZONE"
        case .badSignature: "BADSIG"
        case .badKey: "BADKEY"
        case .badTime: "BADTIME"
        case .badTruncation: "BADTRUNC"
        default: "RCODE\(rawValue)"
        }
    }
}

/// The header's OPCODE (RFC 1035 §4.1.1, RFC 2136 §1).
public struct DNSOpcode: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let query = DNSOpcode(rawValue: 0)
    public static let update = DNSOpcode(rawValue: 5)
}

/// An entry of a message's first section: QUESTION in a query, ZONE in an UPDATE.
public struct DNSQuestion: Sendable, Hashable {
    public var name: DNSName
    public var type: DNSRecordType
    public var rrClass: DNSClass

    public init(name: DNSName, type: DNSRecordType, rrClass: DNSClass) {
        self.name = name
        self.type = type
        self.rrClass = rrClass
    }
}

/// One resource record as read from a message.
public struct DNSResourceRecord: Sendable, Hashable {
    public var name: DNSName
    public var type: DNSRecordType
    public var rrClass: DNSClass
    public var ttl: UInt32
    public var rdata: [UInt8]

    public init(name: DNSName, type: DNSRecordType, rrClass: DNSClass, ttl: UInt32, rdata: [UInt8]) {
        self.name = name
        self.type = type
        self.rrClass = rrClass
        self.ttl = ttl
        self.rdata = rdata
    }

    /// A TXT record's character-strings (RFC 1035 §3.3.14); nil for other types or RDATA that
    /// does not split into whole character-strings.
    public var textStrings: [[UInt8]]? {
        guard type == .txt else { return nil }
        var strings: [[UInt8]] = []
        var offset = 0
        while offset < rdata.count {
            let length = Int(rdata[offset])
            guard offset + 1 + length <= rdata.count else { return nil }
            strings.append(Array(rdata[offset + 1..<offset + 1 + length]))
            offset += 1 + length
        }
        return strings
    }

    /// The type an RRSIG covers (RFC 4034 §3.1); nil for other types.
    public var typeCovered: DNSRecordType? {
        guard type == .rrsig, rdata.count >= 2 else { return nil }
        return DNSRecordType(rawValue: UInt16(rdata[0]) << 8 | UInt16(rdata[1]))
    }
}

/// A message as read from a server: header, sections, and the TSIG record when the last
/// additional record is one.
public struct DNSMessage: Sendable {
    public var id: UInt16
    /// QR: an answer rather than a request.
    public var isResponse: Bool
    public var opcode: DNSOpcode
    public var isAuthoritative: Bool
    public var isTruncated: Bool
    /// The header's 4-bit RCODE; see ``responseCode`` for the one that counts.
    public var headerResponseCode: DNSResponseCode
    /// The first section's entries: QUESTION in a query, ZONE in an UPDATE.
    public var questions: [DNSQuestion]
    /// ANSWER in a query, PREREQUISITE in an UPDATE.
    public var answers: [DNSResourceRecord]
    /// AUTHORITY in a query, UPDATE in an UPDATE.
    public var authority: [DNSResourceRecord]
    /// ADDITIONAL, without the TSIG record.
    public var additional: [DNSResourceRecord]
    public var tsig: TSIGRecord?
    /// Where the TSIG record starts: what its MAC covers ends here.
    var tsigOffset: Int?
    /// The message as received.
    public var bytes: [UInt8]

    /// TSIG's error when it has one (BADSIG, BADKEY, BADTIME, which a server answers with
    /// NOTAUTH in the header), else the header's RCODE with the upper eight bits an EDNS OPT
    /// record carries (RFC 6891 §6.1.3).
    public var responseCode: DNSResponseCode {
        if let tsig, tsig.error != .noError { return tsig.error }
        if let opt = additional.first(where: { $0.type == .opt }) {
            return DNSResponseCode(rawValue: UInt16(opt.ttl >> 24) << 4 | headerResponseCode.rawValue)
        }
        return headerResponseCode
    }

    public init(parsing bytes: [UInt8]) throws(DNSMessageError) {
        var reader = DNSReader(bytes)
        id = try reader.u16()
        let flags = try reader.u16()
        isResponse = flags & 0x8000 != 0
        opcode = DNSOpcode(rawValue: UInt8((flags >> 11) & 0x0F))
        isAuthoritative = flags & 0x0400 != 0
        isTruncated = flags & 0x0200 != 0
        headerResponseCode = DNSResponseCode(rawValue: flags & 0x000F)
        let questionCount = try reader.u16()
        let answerCount = try reader.u16()
        let authorityCount = try reader.u16()
        let additionalCount = try reader.u16()
        questions = []
        for _ in 0..<questionCount {
            let name = try reader.name()
            let type = DNSRecordType(rawValue: try reader.u16())
            questions.append(DNSQuestion(name: name, type: type, rrClass: DNSClass(rawValue: try reader.u16())))
        }
        func records(_ count: UInt16, _ reader: inout DNSReader) throws(DNSMessageError) -> [(DNSResourceRecord, Int, Int)] {
            var records: [(DNSResourceRecord, Int, Int)] = []
            for _ in 0..<count {
                let start = reader.offset
                let name = try reader.name()
                let type = DNSRecordType(rawValue: try reader.u16())
                let rrClass = DNSClass(rawValue: try reader.u16())
                let ttl = try reader.u32()
                let length = Int(try reader.u16())
                let rdataOffset = reader.offset
                let rdata = try reader.take(length)
                records.append((DNSResourceRecord(name: name, type: type, rrClass: rrClass, ttl: ttl, rdata: rdata), start, rdataOffset))
            }
            return records
        }
        answers = try records(answerCount, &reader).map(\.0)
        authority = try records(authorityCount, &reader).map(\.0)
        var additional = try records(additionalCount, &reader)
        guard reader.offset == bytes.count else { throw DNSMessageError(.malformed, "\(bytes.count - reader.offset) bytes after the last record") }
        tsig = nil
        tsigOffset = nil
        if let last = additional.last, last.0.type == .tsig {
            // Read from the message rather than the RDATA alone: the algorithm name could in
            // principle be compressed against an earlier name.
            var rdataReader = DNSReader(bytes, offset: last.2)
            tsig = try TSIGRecord(keyName: last.0.name, reading: &rdataReader, end: last.2 + last.0.rdata.count)
            tsigOffset = last.1
            additional.removeLast()
        }
        self.additional = additional.map(\.0)
        self.bytes = bytes
    }
}
