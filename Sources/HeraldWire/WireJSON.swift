import Foundation

/// The one JSON encoding Herald puts on the wire: sorted keys so the same value is the same bytes
/// (idempotency, caches, tests), and slashes left alone because URLs travel inside strings.
public enum WireJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        try encoder().encode(value)
    }

    public static func encodeString<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    /// Decodes JSON from anywhere, safely: ``JSONParser`` reads it strictly first, and a body
    /// `JSONDecoder` could crash on is refused with a ``JSONParseError`` instead.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, parsed: JSONParser.parse(data), from: data)
    }

    /// Decodes `data`, already parsed as `parsed` (for callers that check its shape first).
    ///
    /// `JSONDecoder` reads a whole number of 2^53 or more written with a fraction or an exponent
    /// through Foundation's `Decimal` when it is asked for an integer (as ``JSONValue`` and every
    /// `Int64` field ask), and a ~200-byte number such as 9007199254740993 followed by 150 zeros
    /// and `e-150` traps there instead of throwing: one webhook took the server down. No Herald
    /// format needs such a number, so they are refused before `JSONDecoder` sees them.
    public static func decode<T: Decodable>(_ type: T.Type, parsed: JSONValue, from data: Data) throws -> T {
        if parsed.containsUnsafeNumber {
            throw JSONParseError(offset: nil, reason: "a number of 2^53 or more must stand for a whole number that fits 64 bits")
        }
        return try JSONDecoder().decode(type, from: data)
    }
}

extension JSONValue {
    /// Whether a number somewhere in the value is at least 2^53 in magnitude without standing
    /// for a whole number that fits 64 bits as `JSONDecoder` reads it (`9.1e15` and
    /// `9007199254740993.0` do; `1e300` and `18446744073709551616` do not): the numbers
    /// ``WireJSON/decode(_:parsed:from:)`` refuses.
    public var containsUnsafeNumber: Bool {
        switch self {
        // Every Double this large is whole; the parser keeps fitting plain integers as `.int`.
        case .double(let d): return d.magnitude >= 9_007_199_254_740_992
        case .array(let values): return values.contains { $0.containsUnsafeNumber }
        case .object(let members): return members.values.contains { $0.containsUnsafeNumber }
        case .null, .bool, .int, .string: return false
        }
    }
}
