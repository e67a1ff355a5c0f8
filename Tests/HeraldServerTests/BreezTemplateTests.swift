import Foundation
import HeraldNostr
import HeraldPush
import HeraldServer
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// breez/notify's other templates (`http/router.go` at 54b1cdc): each delivered on APNs, FCM and
/// Web Push with the data map breez/notify builds for the same body (`breezsdk/init.go`'s
/// `createPush`: `notification_type` the template, `notification_payload` its data as JSON,
/// `app_data` from the query).
@Suite("breez/notify's templates")
struct BreezTemplateTests {
    /// A NIP-47 `pay_invoice` request as a wallet's relay passes it on: NIP-44 v2 ciphertext of a
    /// 400-character invoice, of exactly the length NIP-44 gives that plaintext (the bytes are random:
    /// only the size matters here), signed with a real BIP-340 key.
    static func payInvoiceRequest() -> String {
        let plaintext = #"{"method":"pay_invoice","params":{"invoice":""# + String(repeating: "q", count: 400) + #""}}"#
        let length = plaintext.utf8.count
        let nextPower = 1 << (Int.bitWidth - (length - 1).leadingZeroBitCount)
        let chunk = nextPower <= 256 ? 32 : nextPower / 8
        let padded = length <= 32 ? 32 : chunk * ((length - 1) / chunk + 1)
        // version, nonce, length prefix and padded plaintext, MAC.
        let payload = (0..<(1 + 32 + 2 + padded + 32)).map { _ in UInt8.random(in: 0...255) }
        let content = Data(payload).base64EncodedString()
        let (app, _) = NostrSecretKey.generate()
        let event = NostrEvent.signed(
            kind: NwcKind.request, tags: [["p", String(repeating: "ab", count: 32)], ["expiration", "1900000000"]],
            content: content, createdAt: 1_780_000_000, by: app)
        return String(decoding: try! WireJSON.encode(event), as: UTF8.self)
    }

    struct Case: Sendable, CustomStringConvertible {
        var template: String
        /// `data` as the caller sends it, and as breez/notify puts it in `notification_payload`.
        var data: [String: JSONValue]
        var description: String { template }

        var body: String {
            String(decoding: try! WireJSON.encode(WebhookRequest(form: .template, name: template, data: data)), as: UTF8.self)
        }
    }

    static let cases: [Case] = [
        Case(template: "payment_received", data: ["payment_hash": .string(String(repeating: "1f", count: 32))]),
        Case(template: "tx_confirmed", data: ["tx_id": .string(String(repeating: "2e", count: 32))]),
        Case(template: "address_txs_confirmed", data: ["address": .string("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")]),
        Case(template: "nwc_event", data: ["event": .string(payInvoiceRequest())]),
    ]

    /// What breez/notify puts in the push's data map for this body.
    static func breezDataMap(_ item: Case) -> [String: String] {
        ["notification_type": item.template, "app_data": "a1", "notification_payload": item.body]
    }

    /// The data maps equal once `notification_payload` is compared as JSON, not as text.
    static func expectBreezMap(_ map: [String: String], _ item: Case, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(map["notification_type"] == item.template, sourceLocation: sourceLocation)
        #expect(map["app_data"] == "a1", sourceLocation: sourceLocation)
        #expect(Set(map.keys) == ["notification_type", "app_data", "notification_payload"], sourceLocation: sourceLocation)
        let payload = try WireJSON.decode(JSONValue.self, from: Data(try #require(map["notification_payload"]).utf8))
        #expect(payload == .object(item.data), sourceLocation: sourceLocation)
        if case .string(let event)? = item.data["event"] {
            // Byte for byte: the wallet checks the id and signature over the text it gets.
            #expect(payload["event"]?.stringValue == event, sourceLocation: sourceLocation)
        }
    }

    @Test("each template reaches APNs, FCM and Web Push with breez/notify's data map", arguments: cases)
    func delivered(_ item: Case) async throws {
        let nds = try WebPushDeliveryTests.nds()
        try await WebPushDeliveryTests.withMocks(apns: true) { mocks, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let subscription = try await webPush.makeSubscription()
                let device = try await WebPushDeliveryTests.register(client, subscription.subscription)
                let token = String(repeating: "0c", count: 32)
                for uri in [
                    "/api/v1/notify?platform=ios&token=\(token)&app_data=a1",
                    "/api/v1/notify?platform=android&token=fcm:APA91b-7&app_data=a1",
                    "/api/v1/notify?platform=webpush&token=\(device.alias)&app_data=a1",
                ] {
                    let response = try await client.post(uri, json: item.body)
                    #expect(response.status == .ok, "\(uri): \(response.text)")
                }

                let apnsRequest = try #require(try await mocks.apns.requests.waitFor(count: 1).first)
                #expect(apnsRequest.accepted)
                let apnsJSON = try #require(apnsRequest.json)
                try Self.expectBreezMap(apnsJSON.compactMapValues { $0 as? String }, item)

                let fcmRequest = try #require(try await mocks.fcm.messages.waitFor(count: 1).first)
                #expect(fcmRequest.accepted)
                try Self.expectBreezMap(try #require(fcmRequest.message?["data"] as? [String: String]), item)

                let message = try #require(try await webPush.messages.waitFor(count: 1).first)
                #expect(message.answer == .created)
                let plaintext = try #require(message.plaintext)
                try Self.expectBreezMap(try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: String]), item)

                if item.template == "nwc_event" {
                    // The sizes a 400-character invoice's request takes, each under the 4 KiB limit.
                    print(
                        "nwc_event pay_invoice: event \(item.data["event"]?.stringValue?.utf8.count ?? 0) B; APNs body \(apnsRequest.body.count) B, FCM body \(fcmRequest.body.count) B, Web Push body \(message.bodyBytes) B"
                    )
                    #expect(apnsRequest.body.count < 4096)
                    #expect(fcmRequest.body.count < 4096)
                    #expect(message.bodyBytes < 4096)
                }
            }
        }
    }

    @Test(
        "a template's missing or mistyped field is 422 invalid_data naming it",
        arguments: [
            (#"{"template":"payment_received","data":{}}"#, "payment_hash"),
            (#"{"template":"tx_confirmed","data":{"tx_id":7}}"#, "tx_id"),
            (#"{"template":"address_txs_confirmed","data":{"addr":"bc1q"}}"#, "address"),
            (#"{"template":"nwc_event","data":{"event_id":"ab"}}"#, "event"),
            (#"{"template":"nwc_event","data":{"event":"{\"id\":\"ab\"}"}}"#, "event"),
            (#"{"template":"nwc_event","data":{"event":{"id":"ab"}}}"#, "event"),
        ])
    func refused(_ body: String, _ field: String) async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let response = try await client.post("/api/v1/notify?platform=android&token=fcm-1", json: body)
            #expect(response.status == .unprocessableContent, "\(response.text)")
            #expect(response.json["error"] as? String == "invalid_data")
            #expect((response.json["message"] as? String)?.contains("\"\(field)\"") == true, "\(response.text)")
        }
    }

    @Test("an nwc_event over the push services' 4 KiB is 422 payload_too_large")
    func nwcTooLarge() async throws {
        let nds = try TestNDS()
        let (key, _) = NostrSecretKey.generate()
        let event = NostrEvent.signed(
            kind: NwcKind.request, tags: [["p", String(repeating: "ab", count: 32)]], content: String(repeating: "A", count: 5000), createdAt: 1,
            by: key)
        let body = String(
            decoding: try WireJSON.encode(
                WebhookRequest(
                    form: .template, name: "nwc_event", data: ["event": .string(String(decoding: try WireJSON.encode(event), as: UTF8.self))])),
            as: UTF8.self)
        try await nds.app().test(.router) { client in
            let response = try await client.post("/api/v1/notify?platform=android&token=fcm-1", json: body)
            #expect(response.status == .unprocessableContent, "\(response.text)")
            #expect(response.json["error"] as? String == "payload_too_large")
        }
    }
}
