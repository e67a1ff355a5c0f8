import Foundation
import HeraldPush
import HeraldWire
import Testing

@Suite("Rendering without JSONEncoder")
struct FastRenderTests {
    static let messages: [PushMessage] = [
        .wake(
            PushData(notificationType: .swapUpdated, notificationPayload: #"{"id":"a/b","status":"x \"y\""}"#, appData: "é\n"),
            collapseID: "swap:a", expiresAt: Date(timeIntervalSince1970: 1_795_000_000.25)
        ),
        PushMessage(kind: .background, data: ["k": "v"]),
        PushMessage(
            kind: .alert, data: ["z": "1", "a": "2", "app_data": "😀"],
            alert: NotificationText(title: "Paid \\ 1 sat", body: "tab\there", image: "https://x/y.png"),
            sound: "default", badge: 3, category: "PAY", interruptionLevel: "time-sensitive",
            android: .init(channelID: "payments", sound: "chime", color: "#ff0000", icon: "ic")
        ),
        PushMessage(kind: .alert, data: [:], alert: NotificationText(title: "", body: ""), android: .init(icon: "only")),
        PushMessage(
            kind: .wake, data: ["type": "incomingHtlc"], alert: NotificationText(title: "t", body: "b"), collapseID: "wake:ab",
            expiresAt: Date(timeIntervalSince1970: 1_795_000_000),
            prelude: [PushMessage(kind: .background, data: ["type": "incoming_htlc_wake"]), PushMessage(kind: .background, data: [:])]
        ),
    ]

    @Test("the stored message is WireJSON's bytes and decodes back", arguments: messages)
    func stored(_ message: PushMessage) throws {
        #expect(message.storedJSON() == (try WireJSON.encode(message)))
        #expect(try WireJSON.decode(PushMessage.self, from: message.storedJSON()) == message)
    }

    @Test("the APNs body is WireJSON's bytes of the payload", arguments: messages)
    func apns(_ message: PushMessage) throws {
        #expect(try APNsPayload.render(message) == (try WireJSON.encode(APNsPayload(message))))
    }
}
