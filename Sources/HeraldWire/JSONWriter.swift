import Foundation

/// Writes JSON byte for byte as ``WireJSON`` does (keys sorted, slashes unescaped, the same
/// string escapes), for the few shapes every webhook needs.
///
/// Why not `JSONEncoder`: a webhook used to pass through it four times (its `data` as the
/// payload string, the push for the size check, the stored job, the provider body), and that was
/// about a fifth of the server's CPU per webhook. The types stay `Codable`; tests hold this
/// writer's output equal to `WireJSON`'s.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The written bytes as `Data`.
    public var data: Data { Data(bytes) }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ value: String) {
        bytes.append(0x22)
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                // Rebased: a slice is appended byte by byte, a buffer with one copy.
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(0x22)
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(0x5C)
        switch byte {
        case 0x22: bytes.append(0x22)
        case 0x5C: bytes.append(0x5C)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    public mutating func integer(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A number as `JSONEncoder` writes it: the shortest text that reads back the same value,
    /// without a trailing `.0`.
    public mutating func double(_ value: Double) {
        guard value.isFinite else {
            raw("null")  // JSONEncoder refuses these; JSON has no such number.
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// Opens an object. Its members follow as ``key(_:)`` and then the value, in sorted key order
    /// (the caller's part, as `.sortedKeys` is `WireJSON`'s); ``endObject()`` closes it.
    public mutating func beginObject() {
        bytes.append(0x7B)
    }

    public mutating func endObject() {
        bytes.append(0x7D)
    }

    /// Starts a member. A comma is due unless the object was just opened: every member follows
    /// either its object's `{` or the end of the member before it, and no value ends in `{`.
    public mutating func key(_ name: String) {
        if bytes.last != 0x7B { bytes.append(0x2C) }
        string(name)
        bytes.append(0x3A)
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): flag ? raw("true") : raw("false")
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            bytes.append(0x5B)
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(0x2C) }
                self.value(element)
            }
            bytes.append(0x5D)
        case .object(let members): object(members)
        }
    }

    public mutating func object(_ members: [String: JSONValue]) {
        beginObject()
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            key(name)
            value(member)
        }
        endObject()
    }

    public mutating func object(_ members: [String: String]) {
        beginObject()
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            key(name)
            string(member)
        }
        endObject()
    }
}
