import Foundation
import HeraldWire
import Testing

/// The webhook bodies of seed 000 (Breez), decoded and rendered to the push data the Breez
/// notification plugin reads.
@Suite("Breez webhook bodies")
struct SeedWebhookTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var body: String
        var type: String
        var payload: String
        var testDescription: String { type }
    }

    static let seedCases: [Case] = [
        Case(
            body: #"{"event": "swap.update", "data": {"id": "", "status": ""}}"#,
            type: "swap_updated",
            payload: #"{"id":"","status":""}"#
        ),
        Case(
            body: #"{"event": "swap.update", "data": {"id": "a1b2", "status": "transaction.mempool"}}"#,
            type: "swap_updated",
            payload: #"{"id":"a1b2","status":"transaction.mempool"}"#
        ),
        Case(
            body: #"{"event": "invoice.request", "data": {"offer": "lno1qq", "invoiceRequest": "lnr1qq"}}"#,
            type: "invoice_request",
            payload: #"{"invoice_request":"lnr1qq","offer":"lno1qq"}"#
        ),
        Case(
            body:
                #"{"template": "lnurlpay_info", "data": {"callback_url": "https://lnurl.example/cb", "reply_url": "https://app.domain/response/1"}}"#,
            type: "lnurlpay_info",
            payload: #"{"callback_url":"https://lnurl.example/cb","reply_url":"https://app.domain/response/1"}"#
        ),
        Case(
            body:
                #"{"template": "lnurlpay_invoice", "data": {"amount": 0, "reply_url": "https://app.domain/response/[response_id]", "verify_url": "https://app.domain/lnurlpay/[identifier]/{payment_hash}"}}"#,
            type: "lnurlpay_invoice",
            payload:
                #"{"amount":0,"reply_url":"https://app.domain/response/[response_id]","verify_url":"https://app.domain/lnurlpay/[identifier]/{payment_hash}"}"#
        ),
        Case(
            body: #"{"template": "lnurlpay_verify", "data": {"payment_hash": "", "reply_url": ""}}"#,
            type: "lnurlpay_verify",
            payload: #"{"payment_hash":"","reply_url":""}"#
        ),
        Case(
            body: #"{"event": "custom.thing", "data": {"x": [1, 2.5, true, null]}}"#,
            type: "custom.thing",
            payload: #"{"x":[1,2.5,true,null]}"#
        ),
    ]

    @Test("a seed body renders to the Breez push data", arguments: seedCases)
    func renders(_ c: Case) throws {
        let webhook = try WireJSON.decode(WebhookRequest.self, from: Data(c.body.utf8))
        try webhook.validate()
        let data = try webhook.pushData(appData: "app-42")
        #expect(data.notificationType.rawValue == c.type)
        #expect(data.notificationPayload == c.payload)
        #expect(
            data.dataMap == [
                "notification_type": c.type, "notification_payload": c.payload, "app_data": "app-42",
            ]
        )
    }

    @Test("the default push data of seed 000 decodes")
    func seedPushData() throws {
        let json = #"{"notification_type": "swap_updated", "notification_payload": "{ \"id\": \"\", \"status\": \"\" }", "app_data": ""}"#
        let data = try WireJSON.decode(PushData.self, from: Data(json.utf8))
        #expect(data.notificationType == .swapUpdated)
        let payload = try WireJSON.decode(SwapUpdate.self, from: Data(data.notificationPayload.utf8))
        #expect(payload == SwapUpdate(id: "", status: ""))
        #expect(data.appData == "")
    }

    @Test("the device's invoice request payload of seed 000 decodes")
    func invoiceRequestPayload() throws {
        let json = #"{"offer": "lno1", "invoice_request": "lnr1", "reply_url": "https://h/api/v1/reply/x"}"#
        let payload = try WireJSON.decode(InvoiceRequestPayload.self, from: Data(json.utf8))
        #expect(payload == InvoiceRequestPayload(offer: "lno1", invoiceRequest: "lnr1", replyURL: "https://h/api/v1/reply/x"))
    }

    @Test(
        "bodies that are not a webhook are refused",
        arguments: [
            #"{"data": {}}"#,
            #"{"event": "a", "template": "b", "data": {}}"#,
            #"{"event": "", "data": {}}"#,
            #"{"event": 5, "data": {}}"#,
            #"{"event": "swap.update", "data": "not an object"}"#,
        ]
    )
    func refusesShapes(_ body: String) {
        #expect(throws: (any Error).self) { try WireJSON.decode(WebhookRequest.self, from: Data(body.utf8)) }
    }

    @Test("a known event with fields missing fails validation with invalid_data")
    func validatesKnownTypes() throws {
        let webhook = try WireJSON.decode(WebhookRequest.self, from: Data(#"{"event":"swap.update","data":{"id":"x"}}"#.utf8))
        #expect(throws: WebhookRequestError.self) { try webhook.validate() }
        do {
            try webhook.validate()
        } catch {
            #expect(error.code.rawValue == "invalid_data")
            #expect(error.message.contains("status"))
        }
    }

    @Test("JSON values keep integers, decimals and nesting through a round trip")
    func jsonValueRoundTrip() throws {
        let text = #"{"a":1,"b":2.5,"c":"s","d":[true,null],"e":{"f":-9007199254740993}}"#
        let value = try WireJSON.decode(JSONValue.self, from: Data(text.utf8))
        #expect(try WireJSON.encodeString(value) == text)
    }
}

@Suite("Device API bodies")
struct DeviceAPITests {
    @Test("the registration, rotation and answer bodies of docs/http-api.md decode and encode with snake_case keys")
    func bodies() throws {
        let register = try WireJSON.decode(
            DeviceRegistrationRequest.self, from: Data(#"{"platform":"ios","push_token":"<APNs device token>"}"#.utf8)
        )
        #expect(register == DeviceRegistrationRequest(platform: "ios", pushToken: "<APNs device token>"))
        let rotate = try WireJSON.decode(DeviceTokenUpdate.self, from: Data(#"{"push_token": "<new token>"}"#.utf8))
        #expect(rotate == DeviceTokenUpdate(platform: nil, pushToken: "<new token>"))
        let answer = DeviceRegistrationAnswer(
            deviceID: "d1", deviceSecret: "s1", alias: "a1",
            webhookURL: "http://127.0.0.1:8080/api/v1/notify?platform=ios&token=a1"
        )
        let encoded = try #require(try JSONSerialization.jsonObject(with: WireJSON.encode(answer)) as? [String: String])
        #expect(
            encoded == [
                "device_id": "d1", "device_secret": "s1", "alias": "a1",
                "webhook_url": "http://127.0.0.1:8080/api/v1/notify?platform=ios&token=a1",
            ])
        let feed = try WireJSON.decode(
            LocalPushFeed.self,
            from: Data(#"{"pushes":[{"seq":7,"platform":"android","payload":{"notification_type":"swap_updated"}}],"next":7}"#.utf8)
        )
        #expect(feed.pushes.first?.payload["notification_type"]?.stringValue == "swap_updated")
        #expect(feed.next == 7)
    }
}

@Suite("Decoding untrusted JSON")
struct SafeDecodeTests {
    /// JSONDecoder traps (SIGILL) on this number when asked for an integer, as JSONValue asks.
    static let trapping = "9007199254740993" + String(repeating: "0", count: 150) + "e-150"

    @Test("WireJSON refuses numbers JSONDecoder would trap on, with an error instead of a crash")
    func refusesTrappingNumbers() throws {
        #expect(throws: JSONParseError.self) {
            try WireJSON.decode(JSONValue.self, from: Data(#"{"n":\#(Self.trapping)}"#.utf8))
        }
        #expect(throws: JSONParseError.self) {
            try WireJSON.decode([String: JSONValue].self, from: Data("[1, {\"a\": [1e300]}]".utf8))
        }
        #expect(throws: JSONParseError.self) {
            try WireJSON.decode(JSONValue.self, from: Data("12345678901234567890".utf8))
        }
        // Plain integers that fit 64 bits, and smaller numbers, decode as JSONDecoder reads them.
        #expect(
            try WireJSON.decode(JSONValue.self, from: Data("[9223372036854775807, 0.5, 2100000000000000000, 1e3]".utf8))
                == .array([.int(9_223_372_036_854_775_807), .double(0.5), .int(2_100_000_000_000_000_000), .int(1000)]))
    }
}
