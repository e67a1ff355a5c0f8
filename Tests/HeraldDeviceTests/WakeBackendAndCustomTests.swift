import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("Wake pushes, backend events, custom handlers and the catalogue")
struct WakeBackendAndCustomTests {
    @Test("incomingHtlc shows Bitkit's open-now message without touching the wallet, and records it pending")
    func wakeNotifyOnly() async throws {
        let container = try Fixtures.temporaryDirectory()
        let wallet = RecordingWallet()
        let store = ContainerRecordStore(container: container)
        let push = Fixtures.fcmPush(["type": "incomingHtlc", "payment_hash": "ph1", "amount_msat": "100000"])
        let result = await Fixtures.plugin(wallet: wallet, record: store).handle(json: push)
        #expect(result.disposition == .handled)
        #expect(result.content.title == "Payment Incoming")
        #expect(result.content.body == "Open now to receive - funds are being held")
        #expect(result.content.category == "INCOMING_PAYMENT" && result.content.interruptionLevel == .timeSensitive)
        #expect(await wallet.calls.isEmpty)
        let record = try store.read()
        #expect(record.pending.map(\.id) == ["ph1"])
        #expect(record.pending.first?.kind == .incomingPayment && record.pending.first?.amount == "100000")
    }

    @Test("a background push of any wake kind is marked silent; the alert push of the same kind is not")
    func silentWake() throws {
        let silent: JSONValue = ["aps": ["content-available": 1], "type": "cjitPaymentArrived", "payment_hash": "ph2"]
        let alert: JSONValue = [
            "aps": ["alert": ["title": "t", "body": "b"], "mutable-content": 1], "type": "cjitPaymentArrived", "payment_hash": "ph2",
        ]
        guard case .wake(let first) = IncomingPush(json: try WireJSON.encode(silent)).notification,
            case .wake(let second) = IncomingPush(json: try WireJSON.encode(alert)).notification
        else {
            Issue.record("both should decode as wakes")
            return
        }
        #expect(first.silent && first.kind == .cjitPaymentArrived && first.paymentHash == "ph2")
        #expect(!second.silent && second.kind == .cjitPaymentArrived)
    }

    @Test("with attemptCompletion a settled payment is reported as received")
    func wakeAttempt() async throws {
        let wallet = RecordingWallet()
        await wallet.setPayment(WalletPayment(paymentHash: "ph", direction: .incoming, status: .complete, amountMsat: 100_000), hash: "ph")
        let push = Fixtures.fcmPush(["notification_type": "incomingHtlc", "notification_payload": #"{"payment_hash":"ph","amount_msat":100000}"#])
        let result = await Fixtures.plugin(wallet: wallet, wakeHandling: .attemptCompletion).handle(json: push)
        #expect(result.content.title == "Payment Received" && result.content.body == "Received 100 sats")
        #expect(await wallet.callsAfterDisconnect() == [.connect, .sync, .paymentByHash("ph"), .disconnect])
    }

    @Test(
        "each wake kind has seed 004's text",
        arguments: [
            ("cjitPaymentArrived", "Payment Incoming", "Open now to receive via new channel"),
            ("orderPaymentConfirmed", "Channel Ready", "Open the app to complete setup"),
            ("mutualClose", "Channel Closed", "Funds moved to savings"),
        ])
    func wakeTexts(kind: String, title: String, body: String) async {
        let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: Fixtures.fcmPush(["type": kind]))
        #expect(result.content.title == title && result.content.body == body)
    }

    @Test("backend deposit: the backend's own text is shown, the deposit is pending, confirmation refreshes the balance")
    func backendDeposit() async throws {
        let container = try Fixtures.temporaryDirectory()
        let store = ContainerRecordStore(container: container)
        let wallet = RecordingWallet()
        let plugin = Fixtures.plugin(wallet: wallet, record: store)
        let received: JSONValue = [
            "aps": ["alert": ["title": "Deposit detected", "body": "100.00 USDC is on its way"], "mutable-content": 1],
            "action": "DEPOSIT_RECEIVED", "campaign_id": "", "campaign_name": "", "transaction_id": "txn_9", "amount": "100.00", "asset": "USDC",
            "network": "base",
        ]
        let first = await plugin.handle(json: try WireJSON.encode(received))
        #expect(first.content.title == "Deposit detected" && first.content.body == "100.00 USDC is on its way")
        #expect(await wallet.calls.isEmpty)
        #expect(try store.read().pending.map(\.id) == ["txn_9"])

        let confirmed = Fixtures.fcmPush(["action": "DEPOSIT_CONFIRMED", "transaction_id": "txn_9", "amount": "100.00", "asset": "USDC"])
        let second = await plugin.handle(json: confirmed)
        #expect(second.content.title == "Deposit Confirmed" && second.content.body == "100.00 USDC added to your balance")
        #expect(await wallet.callsAfterDisconnect() == [.connect, .sync, .disconnect])
        let record = try store.read()
        #expect(record.pending.isEmpty)
        #expect(record.receipts.map(\.amount) == ["100.00"] && record.receipts.first?.unit == "USDC")
    }

    @Test("an unknown type goes to the app's handler, with the wallet and replies at hand")
    func customHandler() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let plugin = Fixtures.plugin(wallet: wallet).registering(
                ClosureNotificationHandler { push, context in
                    let limits = try await context.wallet().receiveLimits()
                    let url = push.payloadJSON?["reply_url"]?.stringValue ?? ""
                    await context.reply(["max": String(limits.maxMsat)], to: url)
                    return NotificationContent(title: "NWC request", body: push.appData ?? "")
                },
                for: "nostr_dm"
            )
            let push = Fixtures.fcmPush([
                "notification_type": "nostr_dm", "notification_payload": #"{"reply_url":"\#(server.url("/nwc"))"}"#, "app_data": "from-app",
            ])
            let result = await plugin.handle(json: push)
            #expect(result.disposition == .handled && result.content.title == "NWC request" && result.content.body == "from-app")
            #expect(await server.requests.first?.bodyText == #"{"max":"4000000000"}"#)
        }
    }

    @Test("an unknown type without a handler, or a handler that throws, shows the fallback")
    func customFallback() async {
        struct Failing: CustomNotificationHandler {
            struct Boom: Error {}
            func handle(_ push: CustomPush, in context: TaskContext) async throws -> NotificationContent { throw Boom() }
        }
        let plain = Fixtures.plugin(wallet: RecordingWallet())
        let unknown = await plain.handle(json: Fixtures.fcmPush(["notification_type": "mystery", "notification_payload": "{}"]))
        #expect(unknown.disposition == .fellBack && unknown.content.title == "Wallet Update" && unknown.content.body == "Open the app for details")
        let throwing = await plain.registering(Failing(), for: "mystery").handle(json: Fixtures.fcmPush(["notification_type": "mystery"]))
        #expect(throwing.disposition == .fellBack && throwing.content.title == "Wallet Update")
    }

    @Test("an undecodable push still shows a sensible message, the sender's alert if it had one")
    func undecodable() async {
        let plugin = Fixtures.plugin(wallet: RecordingWallet())
        let garbage = await plugin.handle(json: Data("not json".utf8))
        #expect(garbage.disposition == .fellBack && garbage.content.title == "Wallet Update")
        let badPayload = await plugin.handle(json: Fixtures.fcmPush(["notification_type": "lnurlpay_verify", "notification_payload": "{}"]))
        #expect(badPayload.disposition == .fellBack && badPayload.content.title == "Payment Verification Failed")
    }

    @Test("the app overrides and localises the catalogue")
    func localisedCatalogue() async throws {
        let table = #"{"incoming_htlc": {"title": "Zahlung kommt", "body": "Jetzt {app} öffnen"}, "fallback": {"title": "Neuigkeiten"}}"#
        let catalogue = try ContentCatalogue.default.overriding([:], appName: "Bitkit").localized(from: Data(table.utf8))
        let plugin = Fixtures.plugin(wallet: RecordingWallet(), catalogue: catalogue)
        let wake = await plugin.handle(json: Fixtures.fcmPush(["type": "incomingHtlc"]))
        #expect(wake.content.title == "Zahlung kommt" && wake.content.body == "Jetzt Bitkit öffnen")
        #expect(wake.content.interruptionLevel == .timeSensitive)
        let other = await plugin.handle(json: Data("[]".utf8))
        #expect(other.content.title == "Neuigkeiten" && other.content.body == "Open Bitkit for details")
    }
}
