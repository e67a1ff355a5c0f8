import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Testing

/// Subscriptions that asked for WebKit's declarative form, on the wire: their visible pushes in
/// that form, everything else as before.
@Suite("Declarative Web Push, on the wire")
struct DeclarativeWebPushTests {
    static let navigate = "https://wallet.example/open"

    static func target(_ subscription: MockWebPushSubscription, declarative: Bool) -> PushTarget {
        var asked = subscription.subscription
        asked.declarative = declarative
        return PushTarget(platform: .webpush, token: asked.storageToken)
    }

    /// A webhook's push: the Breez data map, with the text iOS shows when no extension rewrites it.
    static let webhookPush = PushMessage.wake(swapUpdateData, collapseID: "swap-0a1b2c")

    static let declarativeJSON =
        #"{"mutable":true,"notification":{"body":"Open your wallet to continue.","data":{"app_data":"wallet-7","notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"},"navigate":"https://wallet.example/open","tag":"swap-0a1b2c","title":"Wallet activity"},"web_push":8030}"#
    static let plainJSON =
        #"{"app_data":"wallet-7","notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"}"#

    /// Sends `message` to a declarative and a plain subscription of the look-alike, in that order.
    static func sendToBoth(
        _ message: PushMessage, navigateURL: String? = navigate
    ) async throws -> (declarative: MockWebPushMessage, plain: MockWebPushMessage, subscriptions: [MockWebPushSubscription]) {
        let fixture = try WebPushFixture()
        let subscriptions = try await fixture.run(navigateURL: navigateURL) { provider, declarative in
            let plain = try await fixture.server.makeSubscription()
            for (subscription, asked) in [(declarative, true), (plain, false)] {
                let outcome = await provider.send(message, to: Self.target(subscription, declarative: asked), logger: testLogger)
                #expect(outcome.kind == .delivered, "\(outcome)")
            }
            return [declarative, plain]
        }
        let received = await fixture.server.messages.all
        try #require(received.count == 2)
        #expect(received.map(\.subscriptionID) == subscriptions.map(\.id))
        return (received[0], received[1], subscriptions)
    }

    @Test("a visible push is WebKit's declarative form with the data map inside; to a plain subscription the same push is unchanged")
    func visiblePush() async throws {
        let (declarative, plain, _) = try await Self.sendToBoth(Self.webhookPush)
        #expect(declarative.plaintext.map { String(decoding: $0, as: UTF8.self) } == Self.declarativeJSON)
        #expect(plain.plaintext.map { String(decoding: $0, as: UTF8.self) } == Self.plainJSON)
        #expect(plain.plaintext == (try FCMPayload.renderData(Self.webhookPush)))
        // The headers do not change with the form.
        #expect(declarative.urgency == "high" && plain.urgency == "high")
        #expect(declarative.topic == "swap-0a1b2c" && plain.topic == "swap-0a1b2c")
        #expect(declarative.ttl == plain.ttl)
    }

    @Test(
        "both forms open with PyPI's http_ece: the declarative one to the shape above, the plain one to the data map",
        .enabled { await HTTPECEReceiver.isAvailable() })
    func httpECE() async throws {
        let (declarative, plain, subscriptions) = try await Self.sendToBoth(Self.webhookPush)
        let opened = try await HTTPECEReceiver.decrypt(
            declarative.body, privateKey: subscriptions[0].privateKey, authSecret: subscriptions[0].authSecret)
        #expect(String(decoding: opened, as: UTF8.self) == Self.declarativeJSON)
        let message = try WireJSON.decode(DeclarativeWebPushMessage.self, from: opened)
        #expect(message.webPush == 8030 && message.mutable)
        #expect(message.notification.navigate == Self.navigate)
        #expect(message.notification.data == swapUpdateData.dataMap)
        let openedPlain = try await HTTPECEReceiver.decrypt(
            plain.body, privateKey: subscriptions[1].privateKey, authSecret: subscriptions[1].authSecret)
        #expect(String(decoding: openedPlain, as: UTF8.self) == Self.plainJSON)
    }

    @Test("a backend alert is declarative too: its text in the notification, its data map inside, a digest for a tag without a collapse id")
    func backendAlert() async throws {
        let alert = PushMessage(
            kind: .alert, data: ["action": "DEPOSIT_RECEIVED", "amount": "100"], alert: .init(title: "Deposit", body: "100 USDC"))
        let (declarative, plain, _) = try await Self.sendToBoth(alert)
        let message = try WireJSON.decode(DeclarativeWebPushMessage.self, from: try #require(declarative.plaintext))
        #expect(message.notification.title == "Deposit" && message.notification.body == "100 USDC")
        #expect(message.notification.data == alert.data)
        // The same push renders the same tag: delivered twice, it replaces itself.
        let tag = try #require(message.notification.tag)
        #expect(tag.count == 22)
        #expect(
            try WireJSON.decode(DeclarativeWebPushMessage.self, from: WebPushPayload.render(alert, navigate: Self.navigate)).notification.tag == tag)
        #expect(
            plain.plaintext.map { String(decoding: $0, as: UTF8.self) }
                == #"{"action":"DEPOSIT_RECEIVED","amount":"100","notification":{"body":"100 USDC","title":"Deposit"}}"#)
    }

    @Test(
        "a push without text keeps the plain form, as does every push when no https navigate URL is configured",
        arguments: [
            (PushMessage(kind: .wake, data: ["type": "incomingHtlc"], collapseID: "wake:1"), navigate),
            (PushMessage(kind: .background, data: ["type": "incomingHtlcSilent"]), navigate),
            (webhookPush, nil),
        ])
    func plainForm(message: PushMessage, navigateURL: String?) async throws {
        let (declarative, plain, _) = try await Self.sendToBoth(message, navigateURL: navigateURL)
        #expect(declarative.plaintext != nil)
        #expect(declarative.plaintext == plain.plaintext)
        #expect(declarative.plaintext == (try WebPushPayload.render(message)))
    }

    @Test("a declarative message whose encrypted body would pass 4,096 bytes is refused before sending, named as such")
    func tooLarge() throws {
        let plainLimit = WebPushPayload.maxPlaintextBytes
        let message = PushMessage(kind: .wake, data: ["blob": String(repeating: "x", count: plainLimit - 100)], alert: .init(title: "t", body: "b"))
        // The plain form fits; the declarative one, with its wrapper, does not.
        #expect(try WebPushPayload.validate(message).count <= plainLimit)
        let declarative = try WebPushPayload.render(message, navigate: Self.navigate)
        #expect(declarative.count > plainLimit)
        #expect(
            throws: PushValidationError(
                .payloadTooLarge,
                message: "the declarative Web Push message is \(declarative.count) bytes; a 4,096-byte encrypted Web Push body allows \(plainLimit)")
        ) {
            try WebPushPayload.validate(message, navigate: Self.navigate)
        }
    }
}
