import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("The presence stream's text/event-stream parser")
struct ServerSentEventTests {
    /// What `GET …/presence/stream` sends: a greeting, one wake, a keep-alive.
    static let presenceStream = """
        : connected

        event: wake
        data: {"kind":"incomingHtlc","payment_hash":"ab01","amount_msat":1000}

        : keep-alive


        """

    static let expected: [ServerSentEvent] = [
        .comment("connected"),
        .event(name: "wake", data: #"{"kind":"incomingHtlc","payment_hash":"ab01","amount_msat":1000}"#, id: nil),
        .comment("keep-alive"),
    ]

    @Test("the presence stream parses into its comment, wake and keep-alive")
    func presenceStreamWhole() throws {
        var parser = ServerSentEventParser()
        let items = parser.feed(Array(Self.presenceStream.utf8))
        #expect(items == Self.expected)
        guard case .event(_, let data, _) = items[1] else {
            Issue.record("no event")
            return
        }
        let wake = try WireJSON.decode(PresenceWakeEvent.self, from: Data(data.utf8))
        #expect(wake == PresenceWakeEvent(kind: .incomingHtlc, paymentHash: "ab01", amountMsat: 1000))
    }

    @Test("chunks cut anywhere give the same items", arguments: [1, 2, 3, 7, 16, 64])
    func anyChunking(size: Int) {
        var parser = ServerSentEventParser()
        let bytes = Array(Self.presenceStream.utf8)
        var items: [ServerSentEvent] = []
        for start in stride(from: 0, to: bytes.count, by: size) {
            items += parser.feed(bytes[start..<min(bytes.count, start + size)])
        }
        #expect(items == Self.expected)
    }

    @Test("CR LF and lone CR end lines like LF; a CR LF split across chunks is one line end")
    func lineEndings() {
        var parser = ServerSentEventParser()
        var items = parser.feed(Array("event: wake\r\ndata: a\r".utf8))
        items += parser.feed(Array("\ndata: b\r\r: c\r\n".utf8))
        #expect(items == [.event(name: "wake", data: "a\nb", id: nil), .comment("c")])
    }

    @Test("an event is dispatched only at its blank line; one without data is dropped")
    func dispatchRules() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("event: wake\ndata: x\n".utf8)).isEmpty)
        #expect(parser.feed(Array("\n".utf8)) == [.event(name: "wake", data: "x", id: nil)])
        #expect(
            parser.feed(Array("event: empty\n\ndata:no-space\nid: 7\nretry: 10\nunknown\n\n".utf8))
                == [.event(name: "message", data: "no-space", id: "7")])
    }

    @Test("a line past the limit drops its event, not the stream")
    func overlongLine() {
        var parser = ServerSentEventParser(maximumLineBytes: 32)
        let long = "data: " + String(repeating: "x", count: 100) + "\n\n"
        #expect(parser.feed(Array(("event: wake\n" + long + "data: ok\n\n").utf8)) == [.event(name: "message", data: "ok", id: nil)])
    }

    @Test("a byte-order mark at the start is skipped")
    func byteOrderMark() {
        var parser = ServerSentEventParser()
        #expect(parser.feed([0xEF, 0xBB, 0xBF] + Array(": connected\n".utf8)) == [.comment("connected")])
    }
}
