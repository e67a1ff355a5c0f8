import Foundation
import HeraldWire
import Testing

@Suite("LSPS5 webhook notifications")
struct LSPS5NotificationTests {
    @Test(
        "the five LSPS5 methods read and write by name",
        arguments: [
            ("lsps5.webhook_registered", LSPS5Method.webhookRegistered),
            ("lsps5.payment_incoming", .paymentIncoming),
            ("lsps5.expiry_soon", .expirySoon),
            ("lsps5.liquidity_management_request", .liquidityManagementRequest),
            ("lsps5.onion_message_incoming", .onionMessageIncoming),
        ])
    func methods(_ name: String, _ method: LSPS5Method) {
        #expect(LSPS5Method(name: name) == method)
        #expect(method.name == name)
    }

    @Test("an unknown method is kept by name")
    func unknownMethod() throws {
        let notification = try LSPS5Notification(
            parsing: Data(#"{"jsonrpc":"2.0","method":"lsps7.channel_soon","params":{"x":1}}"#.utf8))
        #expect(notification.method == .other("lsps7.channel_soon"))
        #expect(notification.params == ["x": .int(1)])
    }

    @Test("the body is written as bLIP-55's example, byte for byte")
    func specBody() {
        let body = LSPS5Notification(method: .other("lsps5.goodbye")).body
        #expect(String(decoding: body, as: UTF8.self) == #"{"jsonrpc":"2.0","method":"lsps5.goodbye","params":{}}"#)
        #expect(
            String(decoding: LSPS5Notification.expirySoon(timeout: 840_000).body, as: UTF8.self)
                == #"{"jsonrpc":"2.0","method":"lsps5.expiry_soon","params":{"timeout":840000}}"#)
    }

    @Test("the signed message is bLIP-55's hex dump for its example")
    func specMessage() {
        let message = LSPS5Webhook.signedMessage(
            timestamp: "2023-05-04T10:52:58.395Z", body: LSPS5Notification(method: .other("lsps5.goodbye")).body)
        let dump =
            "4c535053353a20444f204e4f54205349" + "474e2054484953204d45535341474520" + "4d414e55414c4c593a204c53503a2041"
            + "7420323032332d30352d30345431303a" + "35323a35382e3339355a2049206e6f74" + "69667920"
            + "7b226a736f6e727063223a22" + "322e30222c226d6574686f64223a226c" + "73707335"
            + "2e676f6f64627965222c2270" + "6172616d73223a7b7d7d"
        #expect(message.map { String(format: "%02x", $0) }.joined() == dump)
    }

    @Test("expiry_soon carries its block height, and must")
    func expirySoon() throws {
        let notification = try LSPS5Notification(
            parsing: Data(#"{"jsonrpc":"2.0","method":"lsps5.expiry_soon","params":{"timeout":840123}}"#.utf8))
        #expect(notification == .expirySoon(timeout: 840_123))
        #expect(notification.timeout == 840_123)
        for params in [#"{}"#, #"{"timeout":"soon"}"#, #"{"timeout":-1}"#, #"{"timeout":4294967296}"#] {
            #expect(throws: LSPS5NotificationError.self) {
                try LSPS5Notification(
                    parsing: Data(#"{"jsonrpc":"2.0","method":"lsps5.expiry_soon","params":\#(params)}"#.utf8))
            }
        }
    }

    @Test(
        "what is not a JSON-RPC 2.0 notification is refused",
        arguments: [
            "", "[]", "{}", #"{"jsonrpc":"1.0","method":"lsps5.payment_incoming","params":{}}"#,
            #"{"method":"lsps5.payment_incoming","params":{}}"#,
            #"{"jsonrpc":"2.0","params":{}}"#, #"{"jsonrpc":"2.0","method":7,"params":{}}"#,
            #"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":[]}"#,
            #"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":{},"id":1}"#,
        ])
    func refused(_ body: String) {
        #expect(throws: LSPS5NotificationError.self) { try LSPS5Notification(parsing: Data(body.utf8)) }
    }

    @Test("params may be left out; unknown params are kept")
    func params() throws {
        let bare = try LSPS5Notification(parsing: Data(#"{"jsonrpc":"2.0","method":"lsps5.payment_incoming"}"#.utf8))
        #expect(bare == LSPS5Notification(method: .paymentIncoming))
        let extra = try LSPS5Notification(
            parsing: Data(#"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":{"hint":"x"}}"#.utf8))
        #expect(extra.params == ["hint": .string("x")])
    }

    @Test("timestamps are RFC 3339 UTC with milliseconds")
    func timestamps() throws {
        let date = Date(timeIntervalSince1970: 1_683_195_263.853)
        #expect(ISOTimestamp.text(date) == "2023-05-04T10:14:23.853Z")
        #expect(ISOTimestamp.text(Date(timeIntervalSince1970: 1_683_195_263)) == "2023-05-04T10:14:23.000Z")
        #expect(ISOTimestamp.text(Date(timeIntervalSince1970: 0.0004)) == "1970-01-01T00:00:00.000Z")
        let parsed = try #require(ISOTimestamp.parse("2023-05-04T10:14:23.853Z"))
        #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
        #expect(ISOTimestamp.parse("2023-05-04T10:14:23Z") == Date(timeIntervalSince1970: 1_683_195_263))
        #expect(ISOTimestamp.parse("2023-05-04 10:14:23") == nil)
        #expect(ISOTimestamp.parse("") == nil)
    }
}
