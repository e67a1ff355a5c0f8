import Foundation
import HeraldWire
import Testing

/// WebKit's declarative Web Push form, as Herald writes it.
@Suite("Declarative Web Push messages")
struct DeclarativeWebPushMessageTests {
    @Test("encodes to WebKit's keys, sorted, slashes as they are; decodes back")
    func exactBytes() throws {
        let message = DeclarativeWebPushMessage(
            notification: .init(
                title: "Payment Received", body: "Received 1,000 sats", navigate: "https://wallet.example/open", tag: "paid:ab12",
                data: ["notification_type": "payment_received", "notification_payload": #"{"payment_hash":"ab12"}"#]))
        let json = try WireJSON.encodeString(message)
        #expect(
            json
                == #"{"mutable":true,"notification":{"body":"Received 1,000 sats","data":{"notification_payload":"{\"payment_hash\":\"ab12\"}","notification_type":"payment_received"},"navigate":"https://wallet.example/open","tag":"paid:ab12","title":"Payment Received"},"web_push":8030}"#
        )
        #expect(try WireJSON.decode(DeclarativeWebPushMessage.self, from: Data(json.utf8)) == message)
    }
}
