import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("BOLT12 invoice requests and swap updates")
struct InvoiceRequestAndSwapTests {
    @Test("invoice_request: the wallet answers the offer's request and {invoice} is posted")
    func bolt12Invoice() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let push = Fixtures.apnsPush(
                type: .invoiceRequest, payload: ["offer": "lno1offer", "invoice_request": "lnr1req", "reply_url": .string(server.url("/reply/b"))])
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(result.disposition == .handled && result.content.title == "Fetching Invoice")
            #expect(await wallet.callsAfterDisconnect() == [.connect, .bolt12Invoice(offer: "lno1offer", invoiceRequest: "lnr1req"), .disconnect])
            #expect(await server.requests.first?.bodyText == #"{"invoice":"lni1qqgtest"}"#)
        }
    }

    @Test("invoice_request: a wallet failure posts {error} with the wallet's reason and shows the failure")
    func bolt12Failure() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet([.bolt12Invoice: .fail(WalletError(.amountMissing, "Amount missing in invoice request"))])
            let push = Fixtures.apnsPush(
                type: .invoiceRequest, payload: ["offer": "lno1", "invoice_request": "lnr1", "reply_url": .string(server.url("/b"))])
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(result.disposition == .fellBack && result.content.title == "Invoice Request Failed")
            #expect(await server.requests.first?.bodyText == #"{"error":"Amount missing in invoice request"}"#)
        }
    }

    @Test("invoice_request: an opaque error is reported generically, never its internals")
    func bolt12Opaque() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet([.bolt12Invoice: .failOpaque])
            let push = Fixtures.apnsPush(
                type: .invoiceRequest, payload: ["offer": "lno1", "invoice_request": "lnr1", "reply_url": .string(server.url("/b"))])
            _ = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(await server.requests.first?.bodyText == #"{"error":"Failed to create invoice"}"#)
        }
    }

    @Test("swap_updated: syncs until the swap's payment completes, then shows the amount")
    func swapCompletes() async throws {
        let wallet = RecordingWallet()
        let done = WalletPayment(paymentHash: "p", direction: .incoming, status: .complete, amountMsat: 50_000_000)
        await wallet.setSwapAnswers(
            [nil, WalletPayment(paymentHash: "p", direction: .incoming, status: .pending, amountMsat: 50_000_000), done], idHash: "swaphash")
        let push = Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "swaphash", "status": "transaction.mempool"])
        let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
        #expect(result.disposition == .handled)
        #expect(result.content.title == "Payment Received" && result.content.body == "Received 50000 sats")
        #expect(
            await wallet.callsAfterDisconnect() == [
                .connect, .sync, .paymentBySwap("swaphash"), .sync, .paymentBySwap("swaphash"), .sync, .paymentBySwap("swaphash"), .disconnect,
            ]
        )
    }

    @Test("swap_updated: fee acceptance and outgoing swaps get their own content")
    func swapOtherStates() async throws {
        let wallet = RecordingWallet()
        await wallet.setSwapAnswers(
            [WalletPayment(paymentHash: nil, direction: .incoming, status: .waitingFeeAcceptance, amountMsat: 1_000)], idHash: "fee")
        await wallet.setSwapAnswers([WalletPayment(paymentHash: nil, direction: .outgoing, status: .claimed, amountMsat: 7_000)], idHash: "out")
        let plugin = Fixtures.plugin(wallet: wallet)
        let fee = await plugin.handle(json: Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "fee", "status": "x"]))
        #expect(fee.content.title == "Payment requires fee acceptance" && fee.content.body == "Tap to review updated fees")
        let sent = await plugin.handle(json: Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "out", "status": "x"]))
        #expect(sent.content.title == "Payment Sent" && sent.content.body == "Sent 7 sats")
    }

    @Test("swap_updated: a swap that never completes shows Payment Pending before the deadline")
    func swapPending() async throws {
        let wallet = RecordingWallet()
        let push = Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "slow", "status": "x"])
        let result = await Fixtures.plugin(wallet: wallet, budget: .milliseconds(400)).handle(json: push)
        #expect(result.disposition == .fellBack)
        #expect(result.content.title == "Payment Pending" && result.content.body == "Tap to complete payment")
        // Generous slack: the bound is "at the deadline", not "as soon as the wallet returns" (never).
        #expect(result.elapsedMilliseconds < 1_500)
    }
}
