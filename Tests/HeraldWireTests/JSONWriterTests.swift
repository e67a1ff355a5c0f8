import Foundation
import HeraldWire
import Testing

@Suite("JSONWriter writes what WireJSON writes")
struct JSONWriterTests {
    static let awkwardStrings: [String] = [
        "", "plain", "quote \" and backslash \\", "slash / stays", "tab\tnew\nline\rcr",
        "\u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}\u{7f}", "é, ﬁ, 😀, \u{2028}", "<>&'", "lnurl://x/y?z=1&w=2",
    ]

    static func wire(_ value: some Encodable) throws -> String {
        String(decoding: try WireJSON.encode(value), as: UTF8.self)
    }

    static func written(_ write: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test("strings, with every escape JSONEncoder makes", arguments: awkwardStrings)
    func strings(_ text: String) throws {
        #expect(Self.written { $0.string(text) } == (try Self.wire(text)))
    }

    @Test("numbers")
    func numbers() throws {
        for number: Int64 in [0, 1, -1, 42, .max, .min] {
            #expect(Self.written { $0.integer(number) } == (try Self.wire(number)))
        }
        for number in [0.0, -0.0, 1.5, 3.0, 0.1, 1e20, 1e-7, 1e300, 785_000_000.123456, 123_456_789_012_345_678.0] {
            #expect(Self.written { $0.double(number) } == (try Self.wire(number)), "\(number)")
        }
    }

    @Test("nested values, keys sorted")
    func nested() throws {
        var members: [String: JSONValue] = [
            "z": .null, "a10": true, "a2": false, "B": .int(7), "é": .double(2.5),
            "list": [1, "two", [:], [], nil, ["k": "v"]],
            "object": ["inner": ["deeper": "x"], "empty": .object([:])],
        ]
        for (index, text) in Self.awkwardStrings.enumerated() { members["s\(index)"] = .string(text) }
        members[Self.awkwardStrings[2]] = "awkward key"
        #expect(Self.written { $0.object(members) } == (try Self.wire(members)))
        let strings = ["b": "2", "a": "1", "\u{1}": "ctl"]
        #expect(Self.written { $0.object(strings) } == (try Self.wire(strings)))
    }

    @Test("a webhook's payload string is the data as WireJSON writes it")
    func payloadString() throws {
        let request = WebhookRequest(
            form: .event, name: "swap.update",
            data: ["id": "s/1", "status": "transaction.mempool", "extra": ["n": .double(1.25), "t": "\"q\""]]
        )
        #expect(try request.pushData(appData: nil).notificationPayload == (try Self.wire(request.data)))
    }
}
