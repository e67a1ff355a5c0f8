import Foundation

/// A TSIG key file as BIND's `tsig-keygen` writes it, the form DNS operators hand out keys in:
///
/// ```
/// key "herald" {
///     algorithm hmac-sha256;
///     secret "c2VjcmV0...";
/// };
/// ```
///
/// One `key` statement; whitespace and `#`, `//` and `/* */` comments anywhere between tokens.
/// Anything else (another statement, an option BIND has but Herald does not use, an algorithm
/// other than HMAC-SHA256 or HMAC-SHA512) is an error naming the line, not something skipped:
/// a key Herald half understood would fail later as BADSIG, far from its cause.
public enum BINDKeyFile {
    public static func parse(_ text: String) throws(BINDKeyFileError) -> TSIGKey {
        var tokens = try tokenize(text)[...]
        var key: TSIGKey?
        while let token = tokens.popFirst() {
            guard token.text == "key", !token.quoted else {
                throw BINDKeyFileError(.unexpectedToken, line: token.line, "expected `key`, found `\(token.text)`")
            }
            guard key == nil else { throw BINDKeyFileError(.multipleKeys, line: token.line) }
            key = try parseKey(&tokens, line: token.line)
        }
        guard let key else { throw BINDKeyFileError(.noKey, line: 1) }
        return key
    }

    private static func parseKey(_ tokens: inout ArraySlice<Token>, line: Int) throws(BINDKeyFileError) -> TSIGKey {
        let nameToken = try next(&tokens, after: line, "a key name")
        guard nameToken.quoted || !["{", "}", ";"].contains(nameToken.text) else {
            throw BINDKeyFileError(.unexpectedToken, line: nameToken.line, "expected a key name, found `\(nameToken.text)`")
        }
        let name: DNSName
        do {
            name = try DNSName(nameToken.text.lowercased())
        } catch {
            throw BINDKeyFileError(.invalidKeyName, line: nameToken.line, error.description)
        }
        try expect("{", &tokens, after: nameToken.line)
        var algorithm: (TSIGAlgorithm, Int)?
        var secret: ([UInt8], Int)?
        while true {
            let option = try next(&tokens, after: line, "`algorithm`, `secret` or `}`")
            if option.text == "}", !option.quoted { break }
            let value = try next(&tokens, after: option.line, "a value for `\(option.text)`")
            guard value.quoted || !["{", "}", ";"].contains(value.text) else {
                throw BINDKeyFileError(.unexpectedToken, line: value.line, "expected a value for `\(option.text)`, found `\(value.text)`")
            }
            switch option.text {
            case "algorithm" where !option.quoted:
                guard algorithm == nil else { throw BINDKeyFileError(.duplicateOption, line: option.line, "algorithm") }
                guard let parsed = TSIGAlgorithm(rawValue: value.text.lowercased()) else {
                    throw BINDKeyFileError(.unsupportedAlgorithm, line: value.line, value.text)
                }
                algorithm = (parsed, option.line)
            case "secret" where !option.quoted:
                guard secret == nil else { throw BINDKeyFileError(.duplicateOption, line: option.line, "secret") }
                guard let bytes = Data(base64Encoded: value.text), !bytes.isEmpty else {
                    throw BINDKeyFileError(.invalidSecret, line: value.line, "not base64, or empty")
                }
                secret = (Array(bytes), option.line)
            default:
                throw BINDKeyFileError(.unknownOption, line: option.line, option.text)
            }
            try expect(";", &tokens, after: value.line)
        }
        try expect(";", &tokens, after: line)
        guard let algorithm else { throw BINDKeyFileError(.missingAlgorithm, line: line) }
        guard let secret else { throw BINDKeyFileError(.missingSecret, line: line) }
        return TSIGKey(name: name, algorithm: algorithm.0, secret: secret.0)
    }

    private static func next(_ tokens: inout ArraySlice<Token>, after line: Int, _ expected: String) throws(BINDKeyFileError) -> Token {
        guard let token = tokens.popFirst() else { throw BINDKeyFileError(.unexpectedEnd, line: line, "expected \(expected)") }
        return token
    }

    private static func expect(_ punctuation: String, _ tokens: inout ArraySlice<Token>, after line: Int) throws(BINDKeyFileError) {
        let token = try next(&tokens, after: line, "`\(punctuation)`")
        guard token.text == punctuation, !token.quoted else {
            throw BINDKeyFileError(.unexpectedToken, line: token.line, "expected `\(punctuation)`, found `\(token.text)`")
        }
    }

    private struct Token {
        var text: String
        var quoted: Bool
        var line: Int
    }

    private static func tokenize(_ text: String) throws(BINDKeyFileError) -> [Token] {
        let bytes = Array(text.utf8)
        var tokens: [Token] = []
        var index = 0
        var line = 1
        func isWordByte(_ byte: UInt8) -> Bool {
            !(byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ";") || byte == UInt8(ascii: "\"")
                || byte == UInt8(ascii: "#"))
        }
        while index < bytes.count {
            let byte = bytes[index]
            let following = index + 1 < bytes.count ? bytes[index + 1] : 0
            switch byte {
            case UInt8(ascii: "\n"):
                line += 1
                index += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where following == UInt8(ascii: "/"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where following == UInt8(ascii: "*"):
                let start = line
                index += 2
                while index < bytes.count, !(bytes[index] == UInt8(ascii: "*") && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "/")) {
                    if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                    index += 1
                }
                guard index < bytes.count else { throw BINDKeyFileError(.unterminatedComment, line: start) }
                index += 2
            case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ";"):
                tokens.append(Token(text: String(Unicode.Scalar(byte)), quoted: false, line: line))
                index += 1
            case UInt8(ascii: "\""):
                // BIND's strings take no escapes Herald needs: key names and base64 have no
                // quotes or backslashes, so a backslash is an error rather than a guess.
                let start = line
                index += 1
                var value: [UInt8] = []
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    guard bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\\") else {
                        throw BINDKeyFileError(.unterminatedString, line: start, "a string ends on its line, without escapes")
                    }
                    value.append(bytes[index])
                    index += 1
                }
                guard index < bytes.count else { throw BINDKeyFileError(.unterminatedString, line: start) }
                index += 1
                tokens.append(Token(text: String(decoding: value, as: UTF8.self), quoted: true, line: start))
            default:
                let start = index
                while index < bytes.count, isWordByte(bytes[index]),
                    !(bytes[index] == UInt8(ascii: "/") && index + 1 < bytes.count
                        && (bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*")))
                {
                    index += 1
                }
                tokens.append(Token(text: String(decoding: bytes[start..<index], as: UTF8.self), quoted: false, line: line))
            }
        }
        return tokens
    }
}

/// Why a key file is not one Herald can sign with; `line` is where the problem starts.
public struct BINDKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case noKey = "no_key"
        case multipleKeys = "multiple_keys"
        case unexpectedToken = "unexpected_token"
        case unexpectedEnd = "unexpected_end"
        case unterminatedString = "unterminated_string"
        case unterminatedComment = "unterminated_comment"
        case invalidKeyName = "invalid_key_name"
        case unknownOption = "unknown_option"
        case duplicateOption = "duplicate_option"
        case missingAlgorithm = "missing_algorithm"
        case missingSecret = "missing_secret"
        /// Not `hmac-sha256` or `hmac-sha512`.
        case unsupportedAlgorithm = "unsupported_algorithm"
        case invalidSecret = "invalid_secret"
    }

    public var reason: Reason
    public var line: Int
    public var detail: String

    public init(_ reason: Reason, line: Int, _ detail: String = "") {
        self.reason = reason
        self.line = line
        self.detail = detail
    }

    public var description: String { "line \(line): \(reason.rawValue)" + (detail.isEmpty ? "" : ": \(detail)") }
}
