/// One `<character-string>` (RFC 1035 §3.3): at most 255 bytes behind a length byte.
public struct DNSCharacterString: Sendable, Hashable {
    public static let maximumLength = 255

    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) throws(DNSMessageError) {
        guard bytes.count <= Self.maximumLength else {
            throw DNSMessageError(.characterStringTooLong, "\(bytes.count) bytes, at most \(Self.maximumLength)")
        }
        self.bytes = bytes
    }

    public init(_ text: String) throws(DNSMessageError) { try self.init(Array(text.utf8)) }
}

/// A TXT record's text, such as BIP-353's `bitcoin:?lno=…`, as the character-strings that carry it.
public enum TXTRecord {
    /// The longest text Herald publishes, in bytes. Far above any BOLT12 offer Herald expects
    /// (a few hundred bytes) and far below what one UPDATE can carry (65,535 bytes with the
    /// TSIG record), so the limit is a stable promise callers can check before asking, not an
    /// accident of message size; resolvers fetch an answer this large over TCP either way.
    public static let maximumTextLength = 4000

    /// Splits `text` (its UTF-8 bytes) into character-strings of 255 bytes, the last shorter;
    /// BIP-353 readers concatenate them back without separators, so where the cuts fall does
    /// not matter, not even inside a multi-byte character.
    public static func characterStrings(for text: String) throws(DNSMessageError) -> [DNSCharacterString] {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw DNSMessageError(.emptyText, "no text") }
        guard bytes.count <= maximumTextLength else {
            throw DNSMessageError(.textTooLong, "\(bytes.count) bytes, at most \(maximumTextLength)")
        }
        var strings: [DNSCharacterString] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + DNSCharacterString.maximumLength, bytes.count)
            strings.append(try DNSCharacterString(Array(bytes[start..<end])))
            start = end
        }
        return strings
    }

    /// The RDATA of a TXT record with these character-strings.
    public static func rdata(_ strings: [DNSCharacterString]) -> [UInt8] {
        var bytes: [UInt8] = []
        for string in strings {
            bytes.append(UInt8(string.bytes.count))
            bytes.append(contentsOf: string.bytes)
        }
        return bytes
    }
}

/// One entry of an UPDATE's update section (RFC 2136 §2.5), of the kinds Herald sends.
public enum DNSUpdateOperation: Sendable, Hashable {
    /// "Delete an RRset": every record of `type` at `name`; class ANY, TTL 0, no RDATA.
    case deleteRRset(name: DNSName, type: DNSRecordType)
    /// "Add to an RRset": a TXT record of these character-strings, class IN.
    case addTXT(name: DNSName, ttl: UInt32, strings: [DNSCharacterString])

    public var name: DNSName {
        switch self {
        case .deleteRRset(let name, _), .addTXT(let name, _, _): name
        }
    }

    func write(to writer: inout DNSWriter) {
        switch self {
        case .deleteRRset(let name, let type):
            writer.record(name: name, type: type, class: .any, ttl: 0, rdata: [])
        case .addTXT(let name, let ttl, let strings):
            writer.record(name: name, type: .txt, class: .internet, ttl: ttl, rdata: TXTRecord.rdata(strings))
        }
    }
}

/// An RFC 2136 UPDATE as Herald sends it: one zone, no prerequisites, the updates in order.
///
/// Written by hand rather than through a DNS library (libldns and the like): Herald sends this
/// one message shape, whose fields are all fixed but the names, the TTL and the text, and reads
/// back a header and a TSIG record. A general encoder would bring a C dependency and a surface
/// far larger than the few dozen lines that cover this, which the tests pin byte for byte.
public struct DNSUpdateMessage: Sendable, Hashable {
    public var id: UInt16
    public var zone: DNSName
    public var updates: [DNSUpdateOperation]

    /// Room a TSIG record may take: the longest key and algorithm names, a SHA-512 MAC, six bytes
    /// of other data. What ``init(id:zone:updates:)`` leaves free below DNS's 65,535-byte limit.
    static let tsigRoom = 255 + 10 + 255 + 16 + 64 + 6 + 6

    public init(id: UInt16 = .random(in: .min ... .max), zone: DNSName, updates: [DNSUpdateOperation]) throws(DNSMessageError) {
        guard !updates.isEmpty else { throw DNSMessageError(.noUpdates) }
        for update in updates where !update.name.isSubdomain(of: zone) {
            throw DNSMessageError(.nameOutsideZone, "\(update.name) is not in \(zone)")
        }
        self.id = id
        self.zone = zone
        self.updates = updates
        for case .addTXT(_, _, let strings) in updates where strings.isEmpty {
            throw DNSMessageError(.emptyText, "a TXT record needs a character-string")
        }
        let size = encoded().count
        guard size + Self.tsigRoom <= Int(UInt16.max) else {
            throw DNSMessageError(.messageTooLarge, "\(size) bytes before TSIG")
        }
    }

    /// Replaces whatever TXT records `name` has with one carrying `text`: a delete and an add in
    /// one message, which the server applies as one change (RFC 2136 §3.7), so a reader sees
    /// the old record or the new one, never none or both.
    public static func replaceTXT(
        zone: DNSName, name: DNSName, ttl: UInt32, text: String, id: UInt16 = .random(in: .min ... .max)
    ) throws(DNSMessageError) -> DNSUpdateMessage {
        try DNSUpdateMessage(
            id: id, zone: zone,
            updates: [.deleteRRset(name: name, type: .txt), .addTXT(name: name, ttl: ttl, strings: try TXTRecord.characterStrings(for: text))])
    }

    /// Removes the TXT records of `name`.
    public static func deleteTXT(zone: DNSName, name: DNSName, id: UInt16 = .random(in: .min ... .max)) throws(DNSMessageError) -> DNSUpdateMessage {
        try DNSUpdateMessage(id: id, zone: zone, updates: [.deleteRRset(name: name, type: .txt)])
    }

    /// The message without TSIG: header (OPCODE 5, counts ZOCOUNT 1, PRCOUNT 0, UPCOUNT, ADCOUNT
    /// 0), the zone as an SOA question of class IN, then the updates.
    public func encoded() -> [UInt8] {
        var writer = DNSWriter()
        writer.u16(id)
        writer.u16(UInt16(DNSOpcode.update.rawValue) << 11)
        writer.u16(1)
        writer.u16(0)
        writer.u16(UInt16(updates.count))
        writer.u16(0)
        writer.name(zone)
        writer.u16(DNSRecordType.soa.rawValue)
        writer.u16(DNSClass.internet.rawValue)
        for update in updates { update.write(to: &writer) }
        return writer.bytes
    }
}
