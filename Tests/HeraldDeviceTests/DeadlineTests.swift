import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("Content always comes back before the deadline")
struct DeadlineTests {
    @Test(
        "a wallet that hangs (ignoring cancellation) still gets the fallback in time",
        arguments: [
            RecordingWallet.Name.connect, .receiveLimits, .receive, .paymentByHash, .bolt12Invoice, .sync,
        ])
    func hangingWallet(call: RecordingWallet.Name) async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet([call: .hang])
            let push: Data
            switch call {
            case .receive: push = Fixtures.apnsPush(type: .lnurlpayInvoice, payload: ["amount": 5_000, "reply_url": .string(server.url("/r"))])
            case .paymentByHash:
                push = Fixtures.apnsPush(type: .lnurlpayVerify, payload: ["payment_hash": "h", "reply_url": .string(server.url("/r"))])
            case .bolt12Invoice:
                push = Fixtures.apnsPush(
                    type: .invoiceRequest, payload: ["offer": "lno1", "invoice_request": "r", "reply_url": .string(server.url("/r"))])
            case .sync: push = Fixtures.apnsPush(type: .swapUpdated, payload: ["id": "s", "status": "x"])
            default: push = Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": .string(server.url("/r"))])
            }
            let clock = ContinuousClock()
            let started = clock.now
            let result = await Fixtures.plugin(wallet: wallet, budget: .milliseconds(300)).handle(json: push)
            let took = started.duration(to: clock.now)
            #expect(result.timedOut)
            #expect(result.disposition == .fellBack && result.reason == "deadline")
            #expect(!result.content.title.isEmpty)
            #expect(took < .milliseconds(1_500), "took \(took)")
        }
    }

    @Test("a slow wallet that finishes inside the budget is waited for")
    func slowWallet() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet([.receiveLimits: .slow(.milliseconds(150))])
            let push = Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": .string(server.url("/r"))])
            let result = await Fixtures.plugin(wallet: wallet, budget: .seconds(3)).handle(json: push)
            #expect(result.disposition == .handled && !result.timedOut)
            #expect(await server.requests.count == 1)
        }
    }

    @Test("a slow wallet past the budget falls back at the deadline, not when the wallet returns")
    func slowPastBudget() async throws {
        let wallet = RecordingWallet([.connect: .slow(.seconds(2))])
        let push = Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": "http://127.0.0.1:9/r"])
        let result = await Fixtures.plugin(wallet: wallet, budget: .milliseconds(250)).handle(json: push)
        #expect(result.timedOut && result.content.title == "Receive Payment Failed")
        #expect(result.elapsedMilliseconds < 1_000)
    }

    @Test("a reply server that never answers cannot hold the content past the deadline")
    func hangingReplyServer() async throws {
        try await LoopbackHTTPServer.with(delay: .seconds(5)) { server in
            let push = Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": .string(server.url("/slow"))])
            let result = await Fixtures.plugin(wallet: RecordingWallet(), budget: .milliseconds(600)).handle(json: push)
            #expect(result.disposition == .fellBack)
            #expect(result.content.title == "Receive Payment Failed")
            #expect(result.elapsedMilliseconds < 1_500, "\(result.elapsedMilliseconds) ms, \(result.replies)")
            #expect(result.replies.first?.outcome == .failed)
            #expect(await server.requests.count >= 1)
        }
    }
}
