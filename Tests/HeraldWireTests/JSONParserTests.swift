import Foundation
import HeraldWire
import Testing

/// `JSONParser` against `JSONDecoder`, the decoder it replaces on the webhook path: the same
/// `JSONValue` for every document both accept, and both refusing the malformed ones.
@Suite("JSONParser agrees with JSONDecoder")
struct JSONParserTests {
    /// A document as bytes, so that invalid UTF-8 can be written too.
    struct Document: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var testDescription: String {
            let text = String(decoding: bytes.prefix(60), as: UTF8.self).debugDescription
            return bytes.count > 60 ? "\(text)… (\(bytes.count) bytes)" : text
        }
        init(_ text: String) { bytes = Array(text.utf8) }
        init(bytes: [UInt8]) { self.bytes = bytes }
    }

    static func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> Document {
        Document(String(repeating: open, count: depth) + inner + String(repeating: close, count: depth))
    }

    static let valid: [Document] = [
        // Containers and whitespace.
        Document("{}"), Document("[]"), Document(" {} "), Document("\t\n\r [ ] \n"), Document(#"{"a":{}}"#),
        Document("[[]]"), Document("[{}]"), Document(#"{ "a" : [ 1 , 2 ] , "b" : { } }"#),
        Document("\u{FEFF}{}"), nested(512), nested(512, open: #"{"a":"#, close: "}", inner: "1"),
        // Literals.
        Document("null"), Document("true"), Document("false"), Document("[true,false,null]"),
        // Numbers, in the forms where JSONDecoder's choice of .int or .double is not obvious.
        Document("1"), Document("-0"), Document("0"), Document("1.0"), Document("1e2"), Document("1E+2"),
        Document("-1.5e-3"), Document("9223372036854775807"), Document("9223372036854775808"),
        Document("-9223372036854775808"), Document("-9223372036854775809"), Document("12345678901234567890"),
        Document("0.1"), Document("1e-400"), Document("-0.0"), Document("2.5"), Document("100e-2"),
        Document("1e18"), Document("1e19"), Document("9007199254740993.0"), Document("9007199254740993.5"),
        Document("9007199254740992.9999"), Document("1.0000000000000001"), Document("-9223372036854775808.0"),
        Document("9223372036854775295.0"), Document("9223372036854775296.0"), Document("5e-324"),
        Document("2e-324"), Document("1.7976931348623157e308"), Document("123456789012345678901234567890"),
        Document("1E-2"), Document("0e0"), Document("-1e-7"), Document("3.141592653589793"),
        Document("1844674407370955161.5"), Document("1844674407370955161.6"),
        Document("9007199254740993." + String(repeating: "0", count: 22) + "9"),
        Document("[1e2, 1E2, 1e+2, 1e-2, -0e-0, 0.5e1]"),
        // Strings.
        Document(#""plain""#), Document(#""""#), Document(#""\"\\\/\b\f\n\r\t""#), Document(#""\u0000\u001f""#),
        Document(#""\u00e9\u4e2d""#), Document(#""\ud83d\ude00""#), Document(#""\uD83D\uDE00 and \uDBFF\uDFFF""#),
        Document(#""é中😀""#), Document(#""\u0041BC""#), Document(#""mixed é \n 😀 \u00e9""#),
        Document("\"\u{7F}\""), Document(#""\u2028\u2029""#),
        Document("\"" + String(repeating: "lnurl-é😀 ", count: 1_000) + "\""),
        Document("\"" + String(repeating: #"0123456789\n\u00e9\ud83d\ude00"#, count: 500) + "\""),
        // Objects.
        Document(#"{"a":1,"b":[1,2.5,true,null,"x"],"c":{"d":{"e":[]}}}"#), Document("[1, [2, [3, [4]]]]"),
        Document(#"{"a":1,"a":2}"#), Document(#"{"a":{"x":1},"a":{"y":2}}"#), Document(#"{"\u00e9":1,"é":2}"#),
        Document(#"{"":0}"#), Document(#"{"a\nb":1}"#),
        Document(#"{"event":"swap.update","data":{"id":"wrk-12345","status":"transaction.mempool"}}"#),
    ]

    static let malformed: [Document] = [
        // Empty and truncated.
        Document(""), Document("   "), Document("{"), Document("["), Document(#"{"a":1"#), Document("[1,2"),
        Document(#""abc"#), Document(#"["a""#), Document("]"), Document(#"{"a":1}}"#),
        // Structure.
        Document(#"{"a"}"#), Document(#"{"a" 1}"#), Document("{1:2}"), Document("{'a':1}"), Document("['a']"),
        Document("[1}"), Document(#"{"a":1]"#), Document("[,1]"), Document("[1,,2]"), Document("{,}"),
        Document("[true false]"), Document("[1 2]"), Document("{} x"), Document("[1] [2]"), Document("[1]\u{0}"),
        Document("\u{0C}[1]"),
        // Literals.
        Document("tru"), Document("nul"), Document("NaN"), Document("Infinity"), Document("[-Infinity]"),
        // Numbers: not in JSON's grammar, or too large for a Double.
        Document("[01]"), Document("[-01]"), Document("[+1]"), Document("[.5]"), Document("[1.]"),
        Document("[1.e2]"), Document("[1e]"), Document("[1e+]"), Document("[-]"), Document("[--1]"),
        Document("1e400"), Document("[-1e400]"),
        // Strings: raw control characters, bad escapes, lone surrogates.
        Document("[\"a\tb\"]"), Document("[\"a\nb\"]"), Document(#"["\x"]"#), Document(#"["\U0041"]"#),
        Document(#"["\u12"]"#), Document(#"["\u12G4"]"#), Document(#"["\ud800"]"#), Document(#"["\udc00"]"#),
        Document(#"["\ud800\u0041"]"#), Document(#"["\ud800x"]"#), Document(#"["\udc00\ud800"]"#),
        Document(#"["\ud83d\ude00\ud83d"]"#),
        // Invalid UTF-8: a byte never used, overlong forms, an encoded surrogate, past U+10FFFF,
        // a truncated sequence, a lone continuation byte; in a value and in a key.
        Document(bytes: [0x22, 0xFF, 0x22]), Document(bytes: [0x22, 0xC0, 0x80, 0x22]),
        Document(bytes: [0x22, 0xE0, 0x80, 0xAF, 0x22]), Document(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22]),
        Document(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]), Document(bytes: [0x22, 0xE2, 0x82, 0x22]),
        Document(bytes: [0x22, 0x80, 0x22]), Document(bytes: Array(#"{"a\"#.utf8) + [0x6E, 0xFF] + Array(#"":1}"#.utf8)),
        // Nesting past JSONDecoder's limit of 512.
        nested(513), nested(513, open: #"{"a":"#, close: "}", inner: "1"),
    ]

    /// Trailing commas are not JSON, but JSONDecoder lets them through; so do a UTF-16 text and
    /// a NUL after a top-level number. Webhook senders do not send these.
    static let refusedWhereJSONDecoderIsLenient: [Document] = [
        Document("[1,]"), Document(#"{"a":1,}"#), Document("[[1,],]"), Document(#"{"a":[1,],}"#),
        Document(bytes: [0xFE, 0xFF, 0x00, 0x31]), Document(bytes: [0x31, 0x00]),
    ]

    static func decoded(_ document: Document) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(document.bytes))
    }

    static func parsed(_ document: Document) -> Result<JSONValue, JSONParseError> {
        Result { () throws(JSONParseError) in try JSONParser.parse(document.bytes) }
    }

    /// `==`, but telling Doubles apart by their bits, so 0.0 is not -0.0.
    static func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)):
            return x.bitPattern == y.bitPattern
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy(identical)
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { identical(value, $0) } ?? false }
        default:
            return a == b
        }
    }

    @Test("valid documents parse to what JSONDecoder decodes", arguments: valid)
    func agreesOnValid(_ document: Document) throws {
        let expected = try #require(Self.decoded(document), "JSONDecoder refused a valid document")
        let value = try Self.parsed(document).get()
        #expect(value == expected)
        #expect(Self.identical(value, expected), "\(value) is not bit-identical to \(expected)")
    }

    @Test("malformed documents are refused by both", arguments: malformed)
    func agreesOnMalformed(_ document: Document) {
        #expect(Self.decoded(document) == nil, "JSONDecoder accepted it")
        #expect(throws: JSONParseError.self) { try JSONParser.parse(document.bytes) }
    }

    @Test("what JSONDecoder tolerates beyond RFC 8259 is refused", arguments: refusedWhereJSONDecoderIsLenient)
    func strictWhereJSONDecoderIsNot(_ document: Document) {
        #expect(Self.decoded(document) != nil, "JSONDecoder has become strict here: move this to `malformed`")
        #expect(throws: JSONParseError.self) { try JSONParser.parse(document.bytes) }
    }

    @Test(
        "docs/http-api.md's examples of the 2^53 rule: what passes and what is refused",
        arguments: [
            ("9.1e15", false), ("9007199254740993.0", false), ("9007199254740993", false), ("9007199254740992.5", false),
            ("1e300", true), ("18446744073709551616", true), ("-1e19", true),
        ])
    func unsafeNumbers(text: String, refused: Bool) throws {
        #expect(try JSONParser.parse(Array("[\(text)]".utf8)).containsUnsafeNumber == refused)
    }

    @Test("numbers are classified as JSONDecoder classifies them")
    func numberClassification() throws {
        let cases: [(String, JSONValue)] = [
            ("1", .int(1)), ("-0", .int(0)), ("1.0", .int(1)), ("1e2", .int(100)), ("1E+2", .int(100)),
            ("-1.5e-3", .double(-1.5e-3)), ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)),
            ("12345678901234567890", .double(12_345_678_901_234_567_168)), ("0.1", .double(0.1)),
            // A whole Double is an Int64, however it was written or rounded.
            ("1e-400", .int(0)), ("-0.0", .int(0)), ("1.0000000000000001", .int(1)),
            // From 2^53, the whole part of the text, where Foundation's Decimal holds it in 64 bits.
            ("9007199254740993.5", .int(9_007_199_254_740_993)), ("1844674407370955161.5", .int(1_844_674_407_370_955_161)),
            ("9007199254740992.9999", .double(9_007_199_254_740_992)),
            ("-9223372036854775808.0", .double(-9_223_372_036_854_775_808)),
        ]
        for (text, expected) in cases {
            let value = try JSONParser.parse(Array(text.utf8))
            #expect(Self.identical(value, expected), "\(text): \(value), expected \(expected)")
            #expect(Self.decoded(Document(text)).map { Self.identical($0, expected) } == true, "JSONDecoder on \(text)")
        }
    }

    @Test("the first of duplicate keys wins, as in JSONDecoder")
    func duplicateKeys() throws {
        #expect(try JSONParser.parse(Data(#"{"a":1,"b":0,"a":2}"#.utf8)) == ["a": 1, "b": 0])
    }

    @Test("a number JSONDecoder traps on is a Double")
    func numberThatTrapsJSONDecoder() throws {
        // JSONDecoder reads this as a Decimal whose exponent overflows, then crashes (SIGILL)
        // instead of throwing, so it is not asked here.
        let text = "9007199254740993" + String(repeating: "0", count: 150) + "e-150"
        #expect(try JSONParser.parse(Array(text.utf8)) == .double(9_007_199_254_740_992))
    }

    @Test("100,000 nested arrays or objects throw instead of exhausting the stack")
    func deepNesting() {
        for document in [Self.nested(100_000), Self.nested(100_000, open: #"{"a":"#, close: "}", inner: "1")] {
            #expect(Self.decoded(document) == nil)
            #expect(throws: JSONParseError.self) { try JSONParser.parse(document.bytes) }
        }
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(repeating: UInt8(ascii: "["), count: 100_000)) }
    }

    @Test("errors say where")
    func errorOffsets() {
        #expect(Self.parsed(Document("[1,]")).failure?.offset == 3)
        #expect(Self.parsed(Document(#"{"a":tru}"#)).failure?.offset == 5)
        #expect(Self.parsed(Document(#"["ok","\ud800"]"#)).failure?.offset == 7)
        #expect(Self.parsed(Document("{} x")).failure?.offset == 3)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Suite("WebhookRequest(parsing:) agrees with its Codable conformance")
struct WebhookRequestParsingTests {
    enum Refusal: Sendable {
        case invalidJSON, notAnObject, unknownShape
    }

    static func parsed(_ body: String) -> Result<WebhookRequest, WebhookBodyError> {
        Array(body.utf8).withUnsafeBytes { raw in
            Result { () throws(WebhookBodyError) in try WebhookRequest(parsing: raw) }
        }
    }

    static func decoded(_ body: String) -> WebhookRequest? {
        try? JSONDecoder().decode(WebhookRequest.self, from: Data(body.utf8))
    }

    static let accepted: [String] =
        SeedWebhookTests.seedCases.map(\.body) + [
            #"{"event":"swap.update","data":{"id":"wrk-12345","status":"transaction.mempool"}}"#,
            #"{"event":"x","data":null}"#,
            #"{"event":"x"}"#,
            #"{"event":null,"template":"t"}"#,
            #"{"event":"a","event":"b"}"#,
            #"{"event":"a","data":{"k":1},"data":5}"#,
            #"{"event":"x","extra":[1,{"y":null}],"data":{"n":1.5,"m":-0,"s":"\u00e9"}}"#,
            "{\"template\":\"" + String(repeating: "é", count: 128) + "\"}",
            // 128 Characters of two scalars each: the limit counts Characters, as the Codable path does.
            "{\"event\":\"" + String(repeating: "e\u{301}", count: 128) + "\"}",
        ]

    @Test("bodies JSONDecoder accepts give the same request", arguments: accepted)
    func agrees(_ body: String) throws {
        let expected = try #require(Self.decoded(body))
        #expect(try Self.parsed(body).get() == expected)
    }

    static let refused: [(String, Refusal)] =
        [
            ("[1]", .notAnObject), (#""x""#, .notAnObject), ("null", .notAnObject), ("{}", .unknownShape),
            (#"{"event":1}"#, .unknownShape), (#"{"event":"a","template":"b"}"#, .unknownShape),
            (#"{"event":""}"#, .unknownShape), (#"{"event":"x","data":[1]}"#, .unknownShape),
            (#"{"template":true}"#, .unknownShape), (#"{"Event":"x"}"#, .unknownShape),
            ("{\"event\":\"" + String(repeating: "a", count: 129) + "\"}", .unknownShape),
            ("{", .invalidJSON), ("", .invalidJSON), (#"{"event":"x"} x"#, .invalidJSON),
            (#"{"event":"x","data":{"n":1e400}}"#, .invalidJSON), (#"{"event":"\ud800"}"#, .invalidJSON),
        ]
        + [
            #"{"data": {}}"#, #"{"event": "a", "template": "b", "data": {}}"#, #"{"event": "", "data": {}}"#,
            #"{"event": 5, "data": {}}"#, #"{"event": "swap.update", "data": "not an object"}"#,
        ].map { ($0, .unknownShape) }

    @Test("bodies JSONDecoder refuses are refused, a wrong shape told from broken JSON", arguments: refused)
    func refuses(_ body: String, _ refusal: Refusal) {
        #expect(Self.decoded(body) == nil, "JSONDecoder accepted it")
        switch (Self.parsed(body), refusal) {
        case (.failure(.invalidJSON), .invalidJSON), (.failure(.notAnObject), .notAnObject),
            (.failure(.unknownShape), .unknownShape):
            break
        case (let result, _): Issue.record("expected \(refusal), got \(result)")
        }
    }
}
