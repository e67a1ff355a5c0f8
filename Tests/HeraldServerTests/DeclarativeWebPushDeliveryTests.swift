import Foundation
import HTTPTypes
import HeraldDevice
import HeraldPush
import HeraldServer
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// `webpush` devices that registered with `declarative: true`, end to end: registration, the
/// form their pushes take, and what PUT does to the choice.
@Suite("Declarative Web Push delivery")
struct DeclarativeWebPushDeliveryTests {
    static let navigate = "https://wallet.example/open"

    static func registration(_ subscription: WebPushSubscription, declarative: String?) throws -> String {
        let object = String(decoding: try WireJSON.encode(subscription), as: UTF8.self)
        return #"{"platform":"webpush","subscription":\#(object)"# + (declarative.map { #","declarative":\#($0)"# } ?? "") + "}"
    }

    static func put(_ client: some TestClientProtocol, _ device: DeviceRegistrationAnswer, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/v1/devices/\(device.deviceID)", method: .put,
            headers: [.authorization: "Bearer \(device.deviceSecret ?? "")", .contentType: "application/json"],
            body: ByteBuffer(string: body))
    }

    /// Whether the device's stored subscription asks for the declarative form.
    static func isDeclarative(_ nds: TestNDS, _ device: DeviceRegistrationAnswer) async throws -> Bool? {
        let stored = try await nds.store.device(alias: device.alias)
        return stored.flatMap { WebPushSubscription(storageToken: $0.token) }?.declarative
    }

    @Test(
        "a webhook to a declarative device decrypts with http_ece to WebKit's form around the data map; to a plain device it is unchanged; a wake's data message stays plain",
        .enabled { await HTTPECEReceiver.isAvailable() })
    func webhookAndWake() async throws {
        let nds = try WebPushDeliveryTests.nds()
        let key = try await nds.apiKey([.wake])
        try await WebPushDeliveryTests.withMocks(navigateURL: Self.navigate) { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let declarativeSubscription = try await webPush.makeSubscription()
                let plainSubscription = try await webPush.makeSubscription()
                let made = try await client.post(
                    "/api/v1/devices", json: try Self.registration(declarativeSubscription.subscription, declarative: "true"))
                #expect(made.status == .created, "\(made.text)")
                let declarative = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: made.body))
                let plain = try await WebPushDeliveryTests.register(client, plainSubscription.subscription)
                #expect(try await Self.isDeclarative(nds, declarative) == true)
                #expect(try await Self.isDeclarative(nds, plain) == false)

                for device in [declarative, plain] {
                    let pushed = try await client.post(
                        "/api/v1/notify?platform=webpush&token=\(device.alias)&app_data=a1", json: WebPushDeliveryTests.swap)
                    #expect(pushed.status == .ok, "\(pushed.text)")
                }
                let received = try await webPush.messages.waitFor(count: 2)
                let toDeclarative = try #require(received.first { $0.subscriptionID == declarativeSubscription.id })
                let toPlain = try #require(received.first { $0.subscriptionID == plainSubscription.id })

                // Opened by a receiver that shares no code with Herald.
                let opened = try await HTTPECEReceiver.decrypt(
                    toDeclarative.body, privateKey: declarativeSubscription.privateKey, authSecret: declarativeSubscription.authSecret)
                let openedPlain = try await HTTPECEReceiver.decrypt(
                    toPlain.body, privateKey: plainSubscription.privateKey, authSecret: plainSubscription.authSecret)
                #expect(opened == toDeclarative.plaintext)
                #expect(openedPlain == toPlain.plaintext)
                // Today's form for the plain device: the Breez data map alone.
                let dataMap = try #require(try JSONSerialization.jsonObject(with: openedPlain) as? [String: String])
                #expect(dataMap["notification_type"] == "swap_updated")
                #expect(dataMap["app_data"] == "a1")
                #expect(Set(dataMap.keys) == ["notification_type", "notification_payload", "app_data"])
                // WebKit's form for the declarative one, with the same data map inside.
                let message = try WireJSON.decode(DeclarativeWebPushMessage.self, from: opened)
                #expect(
                    message
                        == DeclarativeWebPushMessage(
                            notification: .init(
                                title: "Wallet activity", body: "Open your wallet to continue.", navigate: Self.navigate, tag: "swap:swap-9",
                                data: dataMap)))
                let expected =
                    #"{"mutable":true,"notification":{"body":"Open your wallet to continue.","data":"#
                    + String(decoding: openedPlain, as: UTF8.self)
                    + #","navigate":"https://wallet.example/open","tag":"swap:swap-9","title":"Wallet activity"},"web_push":8030}"#
                #expect(String(decoding: opened, as: UTF8.self) == expected)
                #expect(toDeclarative.bodyBytes <= 4096)
                // The plugin reads either form as the same notification.
                #expect(
                    IncomingPush(json: opened).notification == IncomingPush(json: openedPlain).notification)

                // A wake is a data message on Web Push, with no text to declare: the plain form.
                let wake = try await client.call(.post, "/api/v1/wake", key: key, json: WakeTests.wake(declarative.deviceID))
                #expect(wake.status == .accepted, "\(wake.text)")
                let woken = try #require(try await webPush.messages.waitFor(count: 3).last)
                let wakeData = try await HTTPECEReceiver.decrypt(
                    woken.body, privateKey: declarativeSubscription.privateKey, authSecret: declarativeSubscription.authSecret)
                let wakeMap = try #require(try JSONSerialization.jsonObject(with: wakeData) as? [String: String])
                #expect(wakeMap["type"] == "incomingHtlc")
                #expect(wakeMap["web_push"] == nil)
            }
        }
    }

    @Test("declarative must be true or false (400 invalid_subscription), and only for webpush; null is absent")
    func registrationChecks() async throws {
        let nds = try WebPushDeliveryTests.nds()
        try await WebPushDeliveryTests.withMocks(navigateURL: Self.navigate) { _, webPush, providers in
            try await nds.app(providers: providers).test(.router) { client in
                let subscription = try await webPush.makeSubscription().subscription
                for bad in [#""yes""#, "1", "0", #""true""#, "{}", "[]"] {
                    let response = try await client.post("/api/v1/devices", json: try Self.registration(subscription, declarative: bad))
                    #expect(response.status == .badRequest, "\(bad): \(response.text)")
                    #expect(response.json["error"] as? String == "invalid_subscription", "\(bad)")
                    #expect((response.json["message"] as? String)?.contains("declarative must be true or false") == true, "\(response.text)")
                }
                let android = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-1","declarative":true}"#)
                #expect(android.status == .badRequest, "\(android.text)")
                #expect(android.json["error"] as? String == "invalid_subscription")
                let androidPlain = try await client.post("/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-2","declarative":false}"#)
                #expect(androidPlain.status == .created, "\(androidPlain.text)")
                for (given, stored) in [("null", false), ("false", false), ("true", true)] {
                    let made = try await client.post("/api/v1/devices", json: try Self.registration(subscription, declarative: given))
                    #expect(made.status == .created, "\(made.text)")
                    let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: made.body))
                    #expect(try await Self.isDeclarative(nds, device) == stored)
                }
            }
        }
    }

    @Test("PUT: a rotated subscription keeps the device's choice; declarative alone changes it without a new challenge; a non-boolean is 400")
    func updates() async throws {
        var challenging = try WebPushDeliveryTests.nds()
        challenging.settings.registration = .challenge
        let nds = challenging
        try await WebPushDeliveryTests.withMocks(navigateURL: Self.navigate) { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let first = try await webPush.makeSubscription()
                let made = try await client.post("/api/v1/devices", json: try Self.registration(first.subscription, declarative: "true"))
                #expect(made.status == .created, "\(made.text)")
                let device = try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: made.body))
                // The challenge has text, so it comes declarative; the plugin reads its code out of the data map.
                let challengeMessage = try #require(try await webPush.messages.waitFor(count: 1).first)
                let challengePlaintext = try #require(challengeMessage.plaintext)
                #expect(try WireJSON.decode(DeclarativeWebPushMessage.self, from: challengePlaintext).notification.navigate == Self.navigate)
                guard case .deviceChallenge(let challenge) = IncomingPush(json: challengePlaintext).notification else {
                    Issue.record("not a challenge: \(String(decoding: challengePlaintext, as: UTF8.self))")
                    return
                }
                let confirmed = try await client.post(
                    "/api/v1/devices/\(device.deviceID)/confirm",
                    json: String(decoding: try WireJSON.encode(DeviceConfirmation(code: challenge.code)), as: UTF8.self))
                #expect(confirmed.status == .ok, "\(confirmed.text)")

                // The distributor rotated the endpoint: a new subscription, proven anew, still declarative.
                let second = try await webPush.makeSubscription()
                let object = String(decoding: try WireJSON.encode(second.subscription), as: UTF8.self)
                let rotated = try await Self.put(client, device, #"{"subscription":\#(object)}"#)
                #expect(rotated.status == .ok, "\(rotated.text)")
                #expect(rotated.json["confirmed"] as? Bool == false)
                #expect(try await Self.isDeclarative(nds, device) == true)
                let secondChallenge = try #require(try await webPush.messages.waitFor(count: 2).last)
                #expect(secondChallenge.subscriptionID == second.id)
                let secondPlaintext = try #require(secondChallenge.plaintext)
                guard case .deviceChallenge(let again) = IncomingPush(json: secondPlaintext).notification else {
                    Issue.record("not a challenge")
                    return
                }
                let reconfirmed = try await client.post(
                    "/api/v1/devices/\(device.deviceID)/confirm",
                    json: String(decoding: try WireJSON.encode(DeviceConfirmation(code: again.code)), as: UTF8.self))
                #expect(reconfirmed.status == .ok, "\(reconfirmed.text)")

                // The choice alone: the same subscription, so no new challenge and still confirmed.
                let flipped = try await Self.put(client, device, #"{"declarative":false}"#)
                #expect(flipped.status == .ok, "\(flipped.text)")
                #expect(flipped.json["confirmed"] as? Bool == true)
                #expect(try await Self.isDeclarative(nds, device) == false)
                let stored = try #require(try await nds.store.device(alias: device.alias))
                #expect(stored.token == second.subscription.storageToken)
                let pushed = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: WebPushDeliveryTests.swap)
                #expect(pushed.status == .ok, "\(pushed.text)")
                let plain = try #require(try await webPush.messages.waitFor(count: 3).last)
                #expect(plain.subscriptionID == second.id)
                let plainPlaintext = try #require(plain.plaintext)
                let plainMap = try #require(try JSONSerialization.jsonObject(with: plainPlaintext) as? [String: String])
                #expect(plainMap["notification_type"] == "swap_updated")

                let bad = try await Self.put(client, device, #"{"declarative":"no"}"#)
                #expect(bad.status == .badRequest, "\(bad.text)")
                #expect(bad.json["error"] as? String == "invalid_subscription")
                #expect(await webPush.messages.count == 3)
            }
        }
    }
}
