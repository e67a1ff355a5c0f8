import Crypto
import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("Sealed pushes on the device (seed 004 §1.1)")
struct SealedPushDeviceTests {
    let deviceKey = Curve25519.KeyAgreement.PrivateKey()

    /// The APNs `userInfo` of a sealed webhook push as Herald renders it: `aps` with the generic
    /// wake alert, and beside it only the envelope.
    static func apnsUserInfo(_ sealed: [String: String]) throws -> Data {
        var object: [String: JSONValue] = [
            "aps": ["alert": ["title": "Wallet activity", "body": "Open your wallet to continue."], "mutable-content": 1]
        ]
        for (key, value) in sealed { object[key] = .string(value) }
        return try WireJSON.encode(object)
    }

    func plugin(wallet: any WalletService, key: Curve25519.KeyAgreement.PrivateKey?) -> DevicePlugin {
        DevicePlugin(
            wallet: wallet,
            transport: URLSessionReplyTransport(),
            configuration: DevicePluginConfiguration(budget: .seconds(5), sealKey: { key })
        )
    }

    @Test("a sealed APNs push opens with the device key and runs its task")
    func sealedInvoiceRequestRuns() async throws {
        try await LoopbackHTTPServer.with { server in
            let payload = try WireJSON.encodeString([
                "offer": "lno1offer", "invoice_request": "lnr1req", "reply_url": server.url("/reply/s"),
            ])
            let data = ["notification_type": "invoice_request", "notification_payload": payload]
            let sealed = try SealedPush.seal(data, to: SealPublicKey(deviceKey.publicKey), typeHint: "invoice_request")
            let wallet = RecordingWallet()
            let result = await plugin(wallet: wallet, key: deviceKey).handle(json: try Self.apnsUserInfo(sealed))
            #expect(result.notificationType == "invoice_request")
            #expect(result.disposition == .handled && result.content.title == "Fetching Invoice")
            #expect(await wallet.callsAfterDisconnect() == [.connect, .bolt12Invoice(offer: "lno1offer", invoiceRequest: "lnr1req"), .disconnect])
            #expect(await server.requests.first?.bodyText == #"{"invoice":"lni1qqgtest"}"#)
        }
    }

    @Test("a sealed FCM data map opens to the same notification as the clear one")
    func sealedFCMDecodes() throws {
        let data = ["notification_type": "swap_updated", "notification_payload": #"{"id":"h1","status":"transaction.mempool"}"#, "app_data": "a1"]
        let sealed = try SealedPush.seal(data, to: SealPublicKey(deviceKey.publicKey), typeHint: "swap_updated")
        let push = IncomingPush(json: try WireJSON.encode(["data": sealed]), sealKey: deviceKey)
        #expect(push.notification == .swapUpdated(SwapUpdate(id: "h1", status: "transaction.mempool")))
        #expect(push.appData == "a1")
    }

    @Test(
        "a sealed push that cannot be opened shows its type's fallback content",
        arguments: [
            ("invoice_request", "Invoice Request Failed"),
            ("swap_updated", "Payment Pending"),
            ("lnurlpay_info", "Receive Payment Failed"),
            ("cjitPaymentArrived", "Payment Incoming"),
            ("DEPOSIT_RECEIVED", "Deposit Received"),
            ("nostr_dm", "Wallet Update"),
        ]
    )
    func wrongKeyFallsBack(type: String, title: String) async throws {
        let data = ["notification_type": type, "notification_payload": "{}"]
        let sealed = try SealedPush.seal(data, to: SealPublicKey(deviceKey.publicKey), typeHint: type)
        let wallet = RecordingWallet()
        let result = await plugin(wallet: wallet, key: Curve25519.KeyAgreement.PrivateKey()).handle(json: try WireJSON.encode(sealed))
        #expect(result.disposition == .fellBack)
        #expect(result.notificationType == type)
        #expect(result.content.title == title)
        #expect(result.reason?.contains("wrong_key") == true)
        #expect(await wallet.calls.isEmpty)
    }

    @Test("without a key, or with a changed ciphertext, the push still gets its type's fallback")
    func noKeyOrTamperedFallsBack() async throws {
        let data = ["notification_type": "invoice_request", "notification_payload": "{}"]
        var sealed = try SealedPush.seal(data, to: SealPublicKey(deviceKey.publicKey), typeHint: "invoice_request")

        let noKey = await plugin(wallet: RecordingWallet(), key: nil).handle(json: try Self.apnsUserInfo(sealed))
        #expect(noKey.content.title == "Invoice Request Failed")
        #expect(noKey.reason?.contains("no_key") == true)

        var bytes = try #require(Data(base64Encoded: sealed["sealed"] ?? ""))
        bytes[40] ^= 0x80
        sealed["sealed"] = bytes.base64EncodedString()
        let tampered = await plugin(wallet: RecordingWallet(), key: deviceKey).handle(json: try Self.apnsUserInfo(sealed))
        #expect(tampered.content.title == "Invoice Request Failed")
        #expect(tampered.reason?.contains("authentication_failed") == true)

        // The extension's last resort, with no plugin at all, shows the same.
        let fallback = DevicePlugin.defaultFallbackContent(for: IncomingPush(json: try Self.apnsUserInfo(sealed)))
        #expect(fallback.title == "Invoice Request Failed")
    }

    @Test("a sealed backend push that cannot be opened shows the backend's own visible text")
    func backendAlertKept() async throws {
        let sealed = try SealedPush.seal(
            ["action": "DEPOSIT_CONFIRMED", "amount": "5.00", "asset": "USDC"], to: SealPublicKey(deviceKey.publicKey),
            typeHint: "DEPOSIT_CONFIRMED"
        )
        var object: [String: JSONValue] = ["aps": ["alert": ["title": "Deposit confirmed", "body": "5 USDC arrived"], "mutable-content": 1]]
        for (key, value) in sealed { object[key] = .string(value) }
        let result = await plugin(wallet: RecordingWallet(), key: nil).handle(json: try WireJSON.encode(object))
        #expect(result.content.title == "Deposit confirmed" && result.content.body == "5 USDC arrived")
    }
}
