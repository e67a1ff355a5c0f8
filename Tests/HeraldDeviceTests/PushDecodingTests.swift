import Crypto
import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("Decoding a push into a typed notification")
struct PushDecodingTests {
    @Test("an APNs userInfo with the Breez keys beside aps decodes with its alert and app_data")
    func apnsSwapUpdated() {
        let push = IncomingPush(json: Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "h1", "status": "transaction.mempool"], appData: "a1"))
        #expect(push.notification == .swapUpdated(SwapUpdate(id: "h1", status: "transaction.mempool")))
        #expect(push.appData == "a1")
        #expect(push.alert == IncomingPush.Alert(title: "Herald", body: "Wallet activity"))
    }

    @Test(
        "an FCM data map decodes each Breez type",
        arguments: [
            ("invoice_request", #"{"offer":"lno1","invoice_request":"lnr1","reply_url":"https://r/1"}"#),
            ("lnurlpay_info", #"{"callback_url":"https://c","reply_url":"https://r/2","identifier":"a@b.c"}"#),
            ("lnurlpay_invoice", #"{"amount":5000,"reply_url":"https://r/3","verify_url":"https://v/{payment_hash}","comment":"hi"}"#),
            ("lnurlpay_verify", #"{"payment_hash":"ab","reply_url":"https://r/4"}"#),
        ])
    func fcmBreezTypes(type: String, payload: String) {
        let push = IncomingPush(json: Fixtures.fcmPush(["notification_type": type, "notification_payload": payload, "app_data": ""]))
        switch push.notification {
        case .invoiceRequest(let request): #expect(type == "invoice_request" && request.invoiceRequest == "lnr1" && request.replyURL == "https://r/1")
        case .lnurlPayInfo(let request): #expect(type == "lnurlpay_info" && request.identifier == "a@b.c")
        case .lnurlPayInvoice(let request): #expect(type == "lnurlpay_invoice" && request.amount == 5000 && request.comment == "hi")
        case .lnurlPayVerify(let request): #expect(type == "lnurlpay_verify" && request.paymentHash == "ab")
        default: Issue.record("decoded \(push.notification)")
        }
    }

    @Test("a Web Push message opens to the FCM data map it carries and decodes the same; one for another key does not")
    func webPush() throws {
        let device = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let map = Fixtures.fcmPush([
            "notification_type": "swap_updated", "notification_payload": #"{"id":"w1","status":"transaction.mempool"}"#,
            "app_data": "a9",
        ])
        let body = try WebPushMessage.encrypt(map, to: device.publicKey.x963Representation, authSecret: auth)
        let push = IncomingPush(webPush: body, privateKey: device, authSecret: auth)
        #expect(push == IncomingPush(json: map))
        #expect(push.notification == .swapUpdated(SwapUpdate(id: "w1", status: "transaction.mempool")))

        let other = IncomingPush(webPush: body, privateKey: P256.KeyAgreement.PrivateKey(), authSecret: auth)
        guard case .undecodable = other.notification else {
            Issue.record("opened with another key: \(other.notification)")
            return
        }
    }

    @Test("a declarative Web Push message decodes as its data map does, with the notification's text as the alert")
    func declarativeWebPush() throws {
        let data = [
            "notification_type": "swap_updated", "notification_payload": #"{"id":"w1","status":"transaction.mempool"}"#, "app_data": "a9",
        ]
        let message = DeclarativeWebPushMessage(
            notification: .init(title: "Wallet activity", body: "Open your wallet to continue.", navigate: "https://w.example", tag: "t", data: data))
        let device = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let body = try WebPushMessage.encrypt(try WireJSON.encode(message), to: device.publicKey.x963Representation, authSecret: auth)
        let push = IncomingPush(webPush: body, privateKey: device, authSecret: auth)
        let plain = IncomingPush(json: Fixtures.fcmPush(data))
        #expect(push.notification == plain.notification)
        #expect(push.notification == .swapUpdated(SwapUpdate(id: "w1", status: "transaction.mempool")))
        #expect(push.appData == "a9")
        #expect(push.alert == IncomingPush.Alert(title: "Wallet activity", body: "Open your wallet to continue."))
    }

    @Test("a backend action push (seed 002) keeps its custom keys as strings")
    func backendAction() {
        let push = IncomingPush(
            json: Fixtures.fcmPush([
                "action": "DEPOSIT_RECEIVED", "campaign_id": "", "campaign_name": "", "transaction_id": "txn_1", "amount": "100.00",
                "asset": "USDC", "network": "base",
            ]))
        guard case .backendEvent(let event) = push.notification else {
            Issue.record("decoded \(push.notification)")
            return
        }
        #expect(event.action == .depositReceived)
        #expect(event.transactionID == "txn_1" && event.amount == "100.00" && event.asset == "USDC" && event.network == "base")
        #expect(event.fields["action"] == nil)
    }

    @Test("a whole FCM message with notification and data decodes from its data")
    func wholeFCMMessage() throws {
        let message: JSONValue = [
            "notification": ["title": "Welcome to LoopRail!", "body": "Your onboarding is complete."],
            "data": ["action": "NONE", "campaign_id": "", "campaign_name": ""],
        ]
        let push = IncomingPush(json: try WireJSON.encode(message))
        #expect(push.notification == .backendEvent(BackendEvent(action: .none, campaignID: "", campaignName: "", fields: [:])))
        #expect(push.alert?.title == "Welcome to LoopRail!")
    }

    @Test("Blocktank's wake pushes (seed 004) decode to wake kinds")
    func wakeKinds() throws {
        let silent: JSONValue = ["aps": ["content-available": 1], "payment_hash": "ph", "amount_msat": 100000, "type": "incoming_htlc_wake"]
        let push = IncomingPush(json: try WireJSON.encode(silent))
        #expect(push.notification == .wake(WakeEvent(kind: .incomingHtlc, paymentHash: "ph", amountMsat: 100_000, silent: true)))
        let viaType = IncomingPush(
            json: Fixtures.fcmPush(["notification_type": "cjitPaymentArrived", "notification_payload": #"{"payment_hash":"p2"}"#]))
        #expect(viaType.notification == .wake(WakeEvent(kind: .cjitPaymentArrived, paymentHash: "p2")))
    }

    @Test("unknown types are custom; broken pushes are undecodable, never errors")
    func unknownAndBroken() {
        let custom = IncomingPush(json: Fixtures.fcmPush(["notification_type": "nostr_dm", "notification_payload": #"{"x":1}"#]))
        #expect(custom.notification == .custom(CustomPush(type: "nostr_dm", payload: #"{"x":1}"#, appData: nil)))
        let badPayload = IncomingPush(json: Fixtures.fcmPush(["notification_type": "lnurlpay_info", "notification_payload": "{not json"]))
        guard case .undecodable(let type, _) = badPayload.notification else {
            Issue.record("decoded \(badPayload.notification)")
            return
        }
        #expect(type == .lnurlpayInfo)
        #expect(IncomingPush(json: Data("[1,2]".utf8)).notification.typeName == "unknown")
        #expect(IncomingPush(json: Fixtures.fcmPush(["hello": "world"])).notification.typeName == "unknown")
    }
}
