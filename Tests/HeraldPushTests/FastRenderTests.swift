import Foundation
import HeraldWire
import Testing

@testable import HeraldPush

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
    /// Rendered elsewhere (APNs sends the body as it is), so only their stored form is Herald's.
    static let verbatimMessages: [PushMessage] = [
        PushMessage(
            kind: .wake, data: ["type": "wake"], badge: -2, expiresAt: Date(timeIntervalSinceReferenceDate: 815_000_000.123456),
            verbatim: .init(apnsHeaders: [["apns-push-type", "alert"], ["apns-priority", "10"]], body: #"{"aps":{"alert":"x"}}"#)
        ),
        PushMessage(kind: .background, data: ["k": ""], verbatim: .init(body: #"{"message":{"data":{"a":"b"}}}"#)),
    ]

    @Test("the stored message is WireJSON's bytes and decodes back", arguments: messages + verbatimMessages)
    func stored(_ message: PushMessage) throws {
        #expect(message.storedJSON() == (try WireJSON.encode(message)))
        #expect(try WireJSON.decode(PushMessage.self, from: message.storedJSON()) == message)
    }

    @Test("a stored message reads back without JSONDecoder, as JSONDecoder reads it", arguments: messages + verbatimMessages)
    func storedReadBack(_ message: PushMessage) throws {
        let stored = message.storedJSON()
        #expect(try PushMessage(stored: JSONParser.parse(stored)) == message)
        #expect(try PushMessage(storedJSON: stored) == message)
    }

    @Test(
        "a shape the writer never writes is read as JSONDecoder reads it, or refused as it refuses it",
        arguments: [
            #"{"kind":"wake","data":{"a":"b"},"unknown":[1,{"x":null}],"sound":null,"alert":null}"#,
            #"{"kind":"alert","data":{},"badge":2.0,"expiresAt":815000000}"#,
            #"{"kind":"alert","data":{},"alert":{"title":"t","body":"b","image":null}}"#,
            #"{"kind":"alert","data":{"n":1}}"#,
            #"{"kind":"loud","data":{}}"#,
            #"{"data":{}}"#,
            #"{"kind":"wake","data":{},"alert":{"title":"t"}}"#,
            #"{"kind":"wake","data":{},"prelude":[{"kind":"background","data":{}},{"kind":"background"}]}"#,
            #"{"kind":"wake","data":{},"verbatim":{"apnsHeaders":[["a",1]],"body":"x"}}"#,
            #"[]"#,
        ])
    func oddShapes(_ json: String) {
        let data = Data(json.utf8)
        let foundation = Result { try WireJSON.decode(PushMessage.self, from: data) }
        let fast = Result { try PushMessage(storedJSON: data) }
        switch (foundation, fast) {
        case (.success(let expected), .success(let read)): #expect(read == expected)
        case (.failure, .failure): break
        default: Issue.record("JSONDecoder gave \(foundation), the stored reader \(fast)")
        }
    }

    @Test("the APNs body is WireJSON's bytes of the payload", arguments: messages)
    func apns(_ message: PushMessage) throws {
        #expect(try APNsPayload.render(message) == (try WireJSON.encode(APNsPayload(message))))
    }
}
