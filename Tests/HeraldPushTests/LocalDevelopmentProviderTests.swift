import Foundation
import HeraldPush
import HeraldWire
import Testing

/// Collects what the local provider records.
actor Recorded {
    var pushes: [RecordedPush] = []
    func add(_ push: RecordedPush) { pushes.append(push) }
}

@Suite("Local development provider")
struct LocalDevelopmentProviderTests {
    @Test("a caller's event name is one log field: a newline in it is escaped, not a second line")
    func loggableNames() {
        #expect(loggable("swap.update\nherald: forged line") == "swap.update\\u{a}herald: forged line")
        #expect(loggable("tab\there\u{2028}") == "tab\\u{9}here\\u{2028}")
        #expect(loggable(String(repeating: "x", count: 300)).count == 129)
        #expect(loggable("payment_received") == "payment_received")
    }

    @Test("a person recognises a Web Push device by its push service's host, not by its stored JSON")
    func shownTargets() {
        let subscription = WebPushSubscription(
            endpoint: "https://updates.push.services.mozilla.com/wpush/v2/gAAAA", keys: .init(p256dh: "BCVx", auth: "BTBZ"))
        #expect(
            PushTarget.shown(destination: .device(.webpush), token: subscription.storageToken) == "web push via updates.push.services.mozilla.com")
        #expect(PushTarget.shown(destination: .device(.ios), token: String(repeating: "ab", count: 32)) == "ababab…")
    }

    @Test("an iOS push is recorded as the exact APNs body an extension would receive")
    func iosPayload() async throws {
        let recorded = Recorded()
        let provider = LocalDevelopmentProvider { await recorded.add($0) }
        let target = PushTarget(platform: .ios, token: "73696d756c617465642d6970686f6e65")

        let outcome = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)

        #expect(outcome.kind == .delivered)
        let push = try #require(await recorded.pushes.first)
        #expect(push.target == target)
        #expect(push.message == .wake(swapUpdateData))
        #expect(push.payload == (try APNsPayload.render(.wake(swapUpdateData))))
        #expect(
            String(decoding: push.payload, as: UTF8.self)
                == #"{"app_data":"wallet-7","aps":{"alert":{"body":"Open your wallet to continue.","title":"Wallet activity"},"mutable-content":1},"notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"}"#
        )
        // What HeraldDevice reads back out of userInfo.
        let decoded = try JSONDecoder().decode(APNsPayload.self, from: push.payload)
        #expect(PushData(dataMap: decoded.data) == swapUpdateData)
    }

    @Test("an Android push is recorded as the flat data map a FirebaseMessagingService receives")
    func androidPayload() async throws {
        let recorded = Recorded()
        let provider = LocalDevelopmentProvider { await recorded.add($0) }

        let outcome = await provider.send(
            .wake(swapUpdateData),
            to: PushTarget(platform: .android, token: "simulated-pixel"),
            logger: testLogger
        )

        #expect(outcome.kind == .delivered)
        let push = try #require(await recorded.pushes.first)
        #expect(
            String(decoding: push.payload, as: UTF8.self)
                == #"{"app_data":"wallet-7","notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"}"#
        )
    }

    @Test("a Web Push push is recorded in the form the subscription asked for, as the real provider sends it")
    func webPushForms() async throws {
        let recorded = Recorded()
        let navigate = "https://wallet.example/open"
        let provider = LocalDevelopmentProvider(recorder: { await recorded.add($0) }, webPushNavigateURL: navigate)
        var subscription = WebPushSubscription(
            endpoint: "https://push.example/x",
            keys: .init(p256dh: WebPushSubscriptionKeys.p256dh, auth: WebPushSubscriptionKeys.auth))
        let plain = PushTarget(platform: .webpush, token: subscription.storageToken)
        subscription.declarative = true
        let declarative = PushTarget(platform: .webpush, token: subscription.storageToken)
        let message = PushMessage.wake(swapUpdateData, collapseID: "swap-0a1b2c")
        for target in [declarative, plain] {
            #expect(await provider.send(message, to: target, logger: testLogger).kind == .delivered)
        }
        let pushes = await recorded.pushes
        #expect(pushes.map(\.payload) == [try WebPushPayload.render(message, navigate: navigate), try WebPushPayload.render(message)])
        #expect(try WireJSON.decode(DeclarativeWebPushMessage.self, from: pushes[0].payload).notification.data == swapUpdateData.dataMap)
    }

    @Test("without a recorder, each push rides on its outcome, a prelude's first, for the outbox to store")
    func carriedPushes() async throws {
        let router = PushRouter(ios: LocalDevelopmentProvider(), android: nil)
        let target = PushTarget(platform: .ios, token: "73696d756c617465642d6970686f6e65")

        let single = await router.send(.wake(swapUpdateData), to: target, logger: testLogger)
        #expect(single.kind == .delivered)
        #expect(single.recorded.map(\.payload) == [try APNsPayload.render(.wake(swapUpdateData))])
        #expect(single.recorded.map(\.target) == [target])

        var twoPush = PushMessage.wake(swapUpdateData)
        let silent = PushMessage(kind: .background, data: ["type": "incoming_htlc_wake"])
        twoPush.prelude = [silent]
        let both = await router.send(twoPush, to: target, logger: testLogger)
        #expect(both.kind == .delivered)
        #expect(both.recorded.map(\.message) == [silent, .wake(swapUpdateData)])
    }

    @Test("a recorder failure is a retry; an oversized payload is refused like the real provider")
    func failures() async throws {
        struct StoreDown: Error {}
        let failing = LocalDevelopmentProvider { _ in throw StoreDown() }
        let target = PushTarget(platform: .ios, token: "73696d756c617465642d6970686f6e65")
        #expect(await failing.send(.wake(swapUpdateData), to: target, logger: testLogger).kind == .retry)

        let (_, tooLarge) = try messages(renderedSizes: 4096, 4097)
        let error = #expect(throws: PushValidationError.self) { try failing.validate(tooLarge, for: target) }
        #expect(error?.code.rawValue == "payload_too_large")
    }
}

/// A subscription's keys as a browser makes them: a point on P-256 and 16 bytes.
enum WebPushSubscriptionKeys {
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
}
