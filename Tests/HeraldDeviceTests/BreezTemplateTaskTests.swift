import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

/// breez/notify's other templates on the phone: payment_received, tx_confirmed,
/// address_txs_confirmed and nwc_event, as the FCM data map delivers them.
@Suite("breez/notify's other templates on the device")
struct BreezTemplateTaskTests {
    static func push(_ type: String, _ payload: String) -> Data {
        Fixtures.fcmPush(["notification_type": type, "notification_payload": payload])
    }

    @Test("payment_received syncs the wallet and shows the settled payment it finds")
    func paymentReceived() async throws {
        let wallet = RecordingWallet()
        await wallet.setPayment(WalletPayment(paymentHash: "ph", direction: .incoming, status: .complete, amountMsat: 21_000_000), hash: "ph")
        let result = await Fixtures.plugin(wallet: wallet).handle(json: Self.push("payment_received", #"{"payment_hash":"ph"}"#))
        #expect(result.disposition == .handled)
        #expect(result.content.title == "Payment Received" && result.content.body == "Received 21000 sats")
        #expect(await wallet.callsAfterDisconnect() == [.connect, .sync, .paymentByHash("ph"), .disconnect])
    }

    @Test("a Spark payment the wallet cannot find yet is shown from the webhook's amount; with none, a prompt to open the app")
    func paymentFromWebhook() async throws {
        let spark = await Fixtures.plugin(wallet: RecordingWallet()).handle(
            json: Self.push("payment_received", #"{"payment_hash":"ph","amount_sat":50000,"lightning_address":"alice@wallet.example"}"#))
        #expect(spark.content.title == "Payment Received" && spark.content.body == "Received 50000 sats")
        let bare = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: Self.push("payment_received", #"{"payment_hash":"ph"}"#))
        #expect(bare.content.title == "Incoming Payment")
        #expect(bare.disposition == .fellBack)
    }

    @Test(
        "tx_confirmed and address_txs_confirmed sync the wallet and say so",
        arguments: [
            ("tx_confirmed", #"{"tx_id":"2e2e"}"#), ("address_txs_confirmed", #"{"address":"bc1qexample"}"#),
        ])
    func confirmed(type: String, payload: String) async throws {
        let wallet = RecordingWallet()
        let result = await Fixtures.plugin(wallet: wallet).handle(json: Self.push(type, payload))
        #expect(result.disposition == .handled)
        #expect(result.content.title == "Transaction Confirmed")
        #expect(await wallet.callsAfterDisconnect() == [.connect, .sync, .disconnect])
    }

    @Test("nwc_event hands the raw event to the wallet's NWC service byte for byte; a wallet without one gets the fallback text")
    func nwc() async throws {
        let event = #"{"id":"aa","pubkey":"bb","created_at":1,"kind":23194,"tags":[["p","cc"]],"content":"x?iv=y","sig":"dd"}"#
        let payload = String(decoding: try WireJSON.encode(NwcEvent(event: event)), as: UTF8.self)
        let nwcWallet = NwcWallet()
        let handled = await Fixtures.plugin(wallet: nwcWallet).handle(json: Self.push("nwc_event", payload))
        #expect(handled.disposition == .handled)
        #expect(handled.content.title == "Nostr Wallet Connect" && handled.content.body == "Request handled")
        #expect(await nwcWallet.events == [event])

        let plain = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: Self.push("nwc_event", payload))
        #expect(plain.disposition == .fellBack)
        #expect(plain.content.body == "Open the app to answer an app's request")
    }
}

/// A wallet with an NWC service: it records what it is handed.
actor NwcWallet: WalletService {
    var events: [String] = []
    func connect() async throws {}
    func receiveLimits() async throws -> ReceiveLimits { ReceiveLimits(minMsat: 1, maxMsat: 1) }
    func receive(_ request: ReceiveRequest) async throws -> ReceivedInvoice { throw WalletError(.unavailable, "receive") }
    func bolt12Invoice(offer: String, invoiceRequest: String) async throws -> String { throw WalletError(.unavailable, "bolt12") }
    func payment(hash: String) async throws -> WalletPayment? { nil }
    func payment(swapIDHash: String) async throws -> WalletPayment? { nil }
    func sync() async throws {}
    func disconnect() async {}
    func handleNwcEvent(_ event: String) async throws -> Bool {
        events.append(event)
        return true
    }
}
