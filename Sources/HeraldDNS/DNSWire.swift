/// Appends DNS wire fields (network byte order) to a byte array.
struct DNSWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func u32(_ value: UInt32) {
        u16(UInt16(value >> 16))
        u16(UInt16(value & 0xFFFF))
    }

    /// The 48-bit time field of TSIG (RFC 8945 §4.2).
    mutating func u48(_ value: UInt64) {
        u16(UInt16((value >> 32) & 0xFFFF))
        u32(UInt32(value & 0xFFFF_FFFF))
    }

    mutating func name(_ name: DNSName) { bytes.append(contentsOf: name.wire) }

    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// A resource record: owner, type, class, TTL, then RDATA behind its length.
    mutating func record(name: DNSName, type: DNSRecordType, class rrClass: DNSClass, ttl: UInt32, rdata: [UInt8]) {
        self.name(name)
        u16(type.rawValue)
        u16(rrClass.rawValue)
        u32(ttl)
        u16(UInt16(rdata.count))
        append(rdata)
    }
}

/// Reads DNS wire fields from a whole message, following name compression pointers.
struct DNSReader {
    let bytes: [UInt8]
    var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    private func need(_ count: Int) throws(DNSMessageError) {
        guard offset + count <= bytes.count else { throw DNSMessageError(.truncated, "\(count) bytes at \(offset)") }
    }

    mutating func u8() throws(DNSMessageError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(DNSMessageError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func u32() throws(DNSMessageError) -> UInt32 {
        let high = try u16()
        return UInt32(high) << 16 | UInt32(try u16())
    }

    mutating func u48() throws(DNSMessageError) -> UInt64 {
        let high = try u16()
        return UInt64(high) << 32 | UInt64(try u32())
    }

    mutating func take(_ count: Int) throws(DNSMessageError) -> [UInt8] {
        try need(count)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A name, compressed or not (RFC 1035 §4.1.4). Pointers must point backwards, which also
    /// bounds the loop a hostile message could build with them.
    mutating func name() throws(DNSMessageError) -> DNSName {
        var labels: [[UInt8]] = []
        var position = offset
        var resumeAt: Int?
        var length = 1
        while true {
            guard position < bytes.count else { throw DNSMessageError(.truncated, "name at \(position)") }
            let byte = bytes[position]
            if byte & 0xC0 == 0xC0 {
                guard position + 1 < bytes.count else { throw DNSMessageError(.truncated, "pointer at \(position)") }
                let target = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < position else { throw DNSMessageError(.badCompressionPointer, "\(target) from \(position)") }
                if resumeAt == nil { resumeAt = position + 2 }
                position = target
                continue
            }
            guard byte & 0xC0 == 0 else { throw DNSMessageError(.badLabel, "label type \(byte >> 6) at \(position)") }
            position += 1
            if byte == 0 { break }
            let count = Int(byte)
            guard position + count <= bytes.count else { throw DNSMessageError(.truncated, "label at \(position)") }
            length += 1 + count
            guard length <= DNSName.maximumWireLength else { throw DNSMessageError(.badLabel, "name over 255 bytes") }
            labels.append(Array(bytes[position..<position + count]))
            position += count
        }
        offset = resumeAt ?? position
        return DNSName(uncheckedLabels: labels)
    }
}

/// A DNS failure: a reason, whose raw value is its stable name, and the particulars. The
/// message, TSIG and client errors differ only in their reasons, so they are this with each.
public struct DNSError<Why: RawRepresentable & Sendable & Hashable>: Error, Sendable, Equatable, CustomStringConvertible
where Why.RawValue == String {
    /// So callers name the reasons as `DNSClientError.Reason`.
    public typealias Reason = Why

    public var reason: Why
    public var detail: String

    public init(_ reason: Why, _ detail: String = "") {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? reason.rawValue : "\(reason.rawValue): \(detail)" }
}

/// Why a message could not be built or read.
public typealias DNSMessageError = DNSError<DNSMessageErrorReason>

/// What is wrong with a message (``DNSMessageError``).
public enum DNSMessageErrorReason: String, Sendable {
    /// A character-string over 255 bytes.
    case characterStringTooLong = "character_string_too_long"
    /// A TXT record with no character-string.
    case emptyText = "empty_text"
    /// A text over ``TXTText/maximumTextLength``.
    case textTooLong = "text_too_long"
    /// An update for a name outside the zone it is sent to (the server would answer NOTZONE).
    case nameOutsideZone = "name_outside_zone"
    /// An UPDATE with nothing to do.
    case noUpdates = "no_updates"
    /// A message or RDATA over 65,535 bytes, what DNS's 16-bit lengths can carry.
    case messageTooLarge = "message_too_large"
    /// A message that ends early.
    case truncated = "truncated"
    /// A compression pointer that does not point backwards.
    case badCompressionPointer = "bad_compression_pointer"
    /// A label of a reserved type, or a name over 255 bytes.
    case badLabel = "bad_label"
    /// Bytes left over after the last section, or a record whose RDATA does not parse.
    case malformed = "malformed"
}
