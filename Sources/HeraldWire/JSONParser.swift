import Foundation

/// Where and why `JSONParser` (or ``WireJSON``) refused its input.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset into the input at which the problem was found; nil for the document
    /// as a whole.
    public var offset: Int?
    public var reason: String

    public init(offset: Int?, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { offset.map { "\(reason) at byte \($0)" } ?? reason }
}

/// A strict RFC 8259 parser from UTF-8 bytes straight to `JSONValue`.
///
/// On any input both accept, it gives the same `JSONValue` as
/// `JSONDecoder().decode(JSONValue.self, from:)`, which costs several times more:
/// - numbers are classified as `JSONDecoder` does when `JSONValue` tries `Int64` before `Double`:
///   any number whose value is a whole `Int64` (`1.0`, `1e2`, `-0`, even `1e-400`) is `.int`;
///   a number too large for a `Double` (`1e400`) is an error;
/// - of duplicate object keys, the first wins;
/// - a UTF-8 byte order mark before the text is ignored, as RFC 8259 allows.
///
/// Unlike `JSONDecoder` it refuses trailing commas (`[1,]`), and it nests at most
/// `maximumDepth` arrays and objects, like `JSONDecoder`, without recursing.
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted; `JSONDecoder`'s limit.
    public static let maximumDepth = 512

    /// Parses one JSON text, with nothing but whitespace around it.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        return try parser.document()
    }

    /// Parses one JSON text held in `Data`, `[UInt8]` or any other contiguous bytes.
    public static func parse(_ bytes: some ContiguousBytes) throws(JSONParseError) -> JSONValue {
        // `withUnsafeBytes` rethrows untyped errors, so carry the typed one out in a Result.
        try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONValue in try parse(raw) }
        }.get()
    }
}

extension UInt8 {
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let minus = UInt8(ascii: "-")
    fileprivate static let plus = UInt8(ascii: "+")
    fileprivate static let dot = UInt8(ascii: ".")
    fileprivate static let digit0 = UInt8(ascii: "0")
    fileprivate static let digit9 = UInt8(ascii: "9")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let closeBracket = UInt8(ascii: "]")

    fileprivate var isDigit: Bool { self >= .digit0 && self <= .digit9 }
}

private struct Parser {
    let bytes: UnsafeRawBufferPointer
    var i = 0
    /// Reused by every string with an escape, so that only the first one allocates.
    var scratch: [UInt8] = []

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// An array or object still open; which of `array` and `object` is used depends on `isObject`.
    struct Container {
        var isObject: Bool
        var array: [JSONValue] = []
        var object: [String: JSONValue] = [:]
        /// The key whose value is being parsed.
        var key = ""
    }

    func error(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? i, reason: reason)
    }

    mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    /// Parses with an explicit stack of open containers instead of recursion, so the depth a
    /// caller can reach is bounded by `maximumDepth` alone, never by the thread's stack size.
    mutating func document() throws(JSONParseError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        var stack: [Container] = []
        stack.reserveCapacity(4)
        var value: JSONValue

        nextValue: while true {
            skipWhitespace()
            guard i < bytes.count else { throw error("unexpected end of input") }
            switch bytes[i] {
            case .openBrace:
                guard stack.count < JSONParser.maximumDepth else { throw error("nesting deeper than 512") }
                i += 1
                skipWhitespace()
                if i < bytes.count, bytes[i] == .closeBrace {
                    i += 1
                    value = .object([:])
                } else {
                    // Most objects have a few members: start with room for them rather than
                    // growing 1, 2, 4 by rehashing.
                    stack.append(Container(isObject: true, object: Dictionary(minimumCapacity: 4), key: try key()))
                    continue nextValue
                }
            case .openBracket:
                guard stack.count < JSONParser.maximumDepth else { throw error("nesting deeper than 512") }
                i += 1
                skipWhitespace()
                if i < bytes.count, bytes[i] == .closeBracket {
                    i += 1
                    value = .array([])
                } else {
                    stack.append(Container(isObject: false))
                    continue nextValue
                }
            case .quote:
                i += 1
                value = .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                value = .null
            case .minus, .digit0 ... .digit9:
                value = try number()
            default:
                throw error("unexpected character")
            }

            // Hand the finished value to its container, and each container it completes to its own.
            while let top = stack.indices.last {
                skipWhitespace()
                guard i < bytes.count else { throw error("unexpected end of input") }
                if stack[top].isObject {
                    let key = stack[top].key
                    // JSONDecoder keeps the first of duplicate keys; the defaulted subscript's
                    // modify inserts only when the key is new, with one hash lookup.
                    keep(&stack[top].object[key, default: value])
                    switch bytes[i] {
                    case .comma:
                        i += 1
                        stack[top].key = try self.key()
                        continue nextValue
                    case .closeBrace:
                        i += 1
                        value = .object(stack.removeLast().object)
                    default:
                        throw error("expected ',' or '}'")
                    }
                } else {
                    stack[top].array.append(value)
                    switch bytes[i] {
                    case .comma:
                        i += 1
                        continue nextValue
                    case .closeBracket:
                        i += 1
                        value = .array(stack.removeLast().array)
                    default:
                        throw error("expected ',' or ']'")
                    }
                }
            }
            skipWhitespace()
            guard i == bytes.count else { throw error("unexpected data after the JSON value") }
            return value
        }
    }

    /// Reads an object key and the colon after it.
    mutating func key() throws(JSONParseError) -> String {
        skipWhitespace()
        guard i < bytes.count, bytes[i] == .quote else { throw error("expected a string key") }
        i += 1
        let key = try string()
        skipWhitespace()
        guard i < bytes.count, bytes[i] == .colon else { throw error("expected ':'") }
        i += 1
        return key
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - i >= count else { throw error("invalid literal") }
        for k in 0..<count where bytes[i + k] != word.utf8Start[k] {
            throw error("invalid literal")
        }
        i += count
    }

    // MARK: Strings

    /// Reads a string's contents, the opening quote already consumed.
    mutating func string() throws(JSONParseError) -> String {
        let start = i
        while i < bytes.count {
            let byte = bytes[i]
            if byte == .quote {
                let contents = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
                i += 1
                // Already validated, so this never repairs anything.
                return String(decoding: contents, as: UTF8.self)
            } else if byte == .backslash {
                return try escapedString(from: start)
            } else if byte < 0x20 {
                throw error("unescaped control character in a string")
            } else if byte < 0x80 {
                i += 1
            } else {
                i += try utf8SequenceLength()
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    /// The rest of a string that has an escape at `i`, its unescaped start at `start`.
    mutating func escapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let byte = bytes[i]
            if byte == .quote {
                i += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == .backslash {
                i += 1
                guard i < bytes.count else { break }
                let escape = bytes[i]
                i += 1
                switch escape {
                case .quote, .backslash, UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): appendUTF8(try escapedScalar())
                default: throw error("invalid escape", at: i - 2)
                }
            } else if byte < 0x20 {
                throw error("unescaped control character in a string")
            } else if byte < 0x80 {
                scratch.append(byte)
                i += 1
            } else {
                let length = try utf8SequenceLength()
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<i + length]))
                i += length
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    /// The scalar of a `\uXXXX` escape (`\u` consumed), joining a surrogate pair. A lone
    /// surrogate is an error, as in JSONDecoder: it cannot be held in a Swift String.
    mutating func escapedScalar() throws(JSONParseError) -> UInt32 {
        let escapeStart = i - 2
        let unit = try hex4()
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - i >= 2, bytes[i] == .backslash, bytes[i + 1] == UInt8(ascii: "u") else {
                throw error("unpaired surrogate", at: escapeStart)
            }
            i += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate", at: escapeStart) }
            return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        case 0xDC00...0xDFFF:
            throw error("unpaired surrogate", at: escapeStart)
        default:
            return unit
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - i >= 4 else { throw error("invalid \\u escape") }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[i]
            let digit: UInt8
            switch byte {
            case .digit0 ... .digit9: digit = byte - .digit0
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            unit = unit << 4 | UInt32(digit)
            i += 1
        }
        return unit
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The length of the well-formed UTF-8 sequence of a non-ASCII scalar at `i` (RFC 3629):
    /// overlong forms, encoded surrogates and anything past U+10FFFF are errors, as in JSONDecoder.
    func utf8SequenceLength() throws(JSONParseError) -> Int {
        let lead = bytes[i]
        let length: Int
        // The range the second byte must fall in; the rest are plain continuation bytes.
        let second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: throw error("invalid UTF-8")
        }
        guard bytes.count - i >= length, second.contains(bytes[i + 1]) else { throw error("invalid UTF-8") }
        var k = 2
        while k < length {
            guard bytes[i + k] & 0xC0 == 0x80 else { throw error("invalid UTF-8") }
            k += 1
        }
        return length
    }

    // MARK: Numbers

    /// Reads a number and classifies it as `JSONDecoder` does for `JSONValue`, which asks for an
    /// `Int64` first: a plain integer that fits is exact; any other number is parsed as a Double,
    /// and if that is a whole number in Int64's range it is an integer too (below 2^53 the
    /// Double's value, from there see `decimalWholePart`); otherwise it is the Double.
    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        let negative = bytes[i] == .minus
        if negative { i += 1 }
        let digitsStart = i

        // Up to 19 significant digits; past that `truncated` is set and only strtod sees them all.
        var mantissa: UInt64 = 0
        var significant = 0
        var truncated = false
        func fold(_ byte: UInt8) {
            if mantissa == 0, byte == .digit0 { return }
            if significant < 19 {
                mantissa = mantissa &* 10 &+ UInt64(byte - .digit0)
                significant += 1
            } else {
                truncated = true
            }
        }

        guard i < bytes.count, bytes[i].isDigit else { throw error("expected a digit", at: i) }
        if bytes[i] == .digit0 {
            i += 1
            if i < bytes.count, bytes[i].isDigit { throw error("leading zero in a number", at: start) }
        } else {
            while i < bytes.count, bytes[i].isDigit {
                fold(bytes[i])
                i += 1
            }
        }
        let integerDigits = i - digitsStart

        var fractionDigits = 0
        if i < bytes.count, bytes[i] == .dot {
            i += 1
            guard i < bytes.count, bytes[i].isDigit else { throw error("expected a digit after '.'") }
            while i < bytes.count, bytes[i].isDigit {
                fold(bytes[i])
                fractionDigits += 1
                i += 1
            }
        }

        var exponent = 0
        var hasExponent = false
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            hasExponent = true
            i += 1
            var exponentNegative = false
            if i < bytes.count, bytes[i] == .minus || bytes[i] == .plus {
                exponentNegative = bytes[i] == .minus
                i += 1
            }
            guard i < bytes.count, bytes[i].isDigit else { throw error("expected a digit in the exponent") }
            while i < bytes.count, bytes[i].isDigit {
                // Saturate: any exponent this large already over- or underflows a Double.
                if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[i] - .digit0) }
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        if fractionDigits == 0, !hasExponent, !truncated {
            // A plain integer of at most 19 digits: exact, if Int64 holds it.
            if negative, mantissa <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- mantissa)) }
            if !negative, mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
        }

        let double: Double
        let power = exponent - fractionDigits
        if !truncated, mantissa <= 1 << 53, (-22...22).contains(power) {
            // Both operands are exact, so IEEE's single correctly rounded operation is the
            // correctly rounded result (Clinger's fast path): no need to call strtod.
            let magnitude = power < 0 ? Double(mantissa) / Self.powersOf10[-power] : Double(mantissa) * Self.powersOf10[power]
            double = negative ? -magnitude : magnitude
        } else {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            guard let parsed = Double(text) else { throw error("invalid number", at: start) }
            double = parsed
        }
        guard double.isFinite else { throw error("number out of range", at: start) }

        if let integer = Int64(exactly: double) {
            if double.magnitude < 0x1p53 { return .int(integer) }
            // From 2^53 on, Doubles are too sparse to stand for the text, so JSONDecoder reads
            // the text again as a Decimal.
            if let whole = decimalWholePart(
                digitsStart: digitsStart, integerDigits: integerDigits, fractionDigits: fractionDigits,
                exponent: exponent, negative: negative
            ) {
                return .int(whole)
            }
        }
        return .double(double)
    }

    static let powersOf10: [Double] = (0...22).map { exponent in
        var power = 1.0
        for _ in 0..<exponent { power *= 10 }
        return power
    }

    /// JSONDecoder's `Int64` for a whole Double from 2^53 up, which it takes from the text read
    /// as a Foundation `Decimal`: a 128-bit significand (digits past it dropped, not rounded),
    /// an `Int8` exponent and trailing zeros compacted away; the significand must then fit in a
    /// UInt64 before the exponent is applied, by truncating division or checked multiplication,
    /// and a negative result is a negated positive Int64. `nil` where that gives no Int64, and
    /// where the `Decimal` overflows: JSONDecoder then traps, and here the number stays a Double.
    func decimalWholePart(
        digitsStart: Int, integerDigits: Int, fractionDigits: Int, exponent: Int, negative: Bool
    ) -> Int64? {
        var significand = (high: UInt64(0), low: UInt64(0))
        var scale = 0
        var full = false
        for k in 0..<integerDigits {
            if !full, let next = Self.timesTenPlus(significand, bytes[digitsStart + k] - .digit0) {
                significand = next
            } else {
                full = true
                guard scale < Int(Int8.max) else { return nil }
                scale += 1
            }
        }
        for k in 0..<fractionDigits {
            guard !full, let next = Self.timesTenPlus(significand, bytes[digitsStart + integerDigits + 1 + k] - .digit0)
            else { break }
            significand = next
            guard scale > Int(Int8.min) else { return nil }
            scale -= 1
        }
        guard exponent.magnitude <= 2 * UInt(Int8.max) else { return nil }
        scale += exponent
        guard (Int(Int8.min)...Int(Int8.max)).contains(scale) else { return nil }

        while significand != (0, 0) {
            let (highQuotient, highRemainder) = significand.high.quotientAndRemainder(dividingBy: 10)
            let (lowQuotient, remainder) = UInt64(10).dividingFullWidth((highRemainder, significand.low))
            guard remainder == 0 else { break }
            significand = (highQuotient, lowQuotient)
            scale += 1
        }
        guard significand.high == 0 else { return nil }
        var magnitude = significand.low
        if scale < 0 {
            for _ in 0 ..< -scale { magnitude /= 10 }
        } else {
            for _ in 0..<scale {
                let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                magnitude = product
            }
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return negative ? -Int64(magnitude) : Int64(magnitude)
    }

    /// `value * 10 + digit` in 128 bits, or `nil` on overflow.
    static func timesTenPlus(_ value: (high: UInt64, low: UInt64), _ digit: UInt8) -> (high: UInt64, low: UInt64)? {
        let (carry, low) = value.low.multipliedFullWidth(by: 10)
        let (high, overflow1) = value.high.multipliedReportingOverflow(by: 10)
        let (high2, overflow2) = high.addingReportingOverflow(carry)
        let (low2, carry2) = low.addingReportingOverflow(UInt64(digit))
        let (high3, overflow3) = high2.addingReportingOverflow(carry2 ? 1 : 0)
        guard !overflow1, !overflow2, !overflow3 else { return nil }
        return (high3, low2)
    }
}

/// The target of an `inout` access that only needs the access itself to happen.
private func keep(_: inout JSONValue) {}
