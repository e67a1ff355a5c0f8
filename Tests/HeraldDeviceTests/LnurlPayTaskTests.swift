import Foundation
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("LNURL-pay tasks answer the reply URL exactly")
struct LnurlPayTaskTests {
    @Test("info: limits from the wallet, LUD-16 metadata, commentAllowed, a day of cache")
    func info() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            await wallet.setLimits(ReceiveLimits(minMsat: 2_000, maxMsat: 50_000_000))
            let push = Fixtures.apnsPush(
                type: .lnurlpayInfo,
                payload: [
                    "callback_url": "https://herald.example/lnurlp/alice/cb", "reply_url": .string(server.url("/reply/i1")),
                    "identifier": "alice@herald.example",
                ]
            )
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)

            #expect(result.disposition == .handled)
            #expect(result.content.title == "Retrieving Payment Information")
            #expect(await wallet.callsAfterDisconnect() == [.connect, .receiveLimits, .disconnect])
            let request = try #require(await server.requests.first)
            #expect(request.method == "POST" && request.path == "/reply/i1")
            #expect(request.headers["cache-control"] == "max-age=86400")
            #expect(request.headers["content-type"] == "application/json")
            #expect(
                request.json
                    == [
                        "callback": "https://herald.example/lnurlp/alice/cb", "minSendable": 2000, "maxSendable": 50_000_000,
                        "metadata": #"[["text/plain","Pay with LNURL"],["text/identifier","alice@herald.example"]]"#,
                        "tag": "payRequest", "commentAllowed": 255,
                    ]
            )
        }
    }

    @Test("info: a wallet that will not connect sends the LNURL error and shows the failure")
    func infoWalletDown() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet([.connect: .fail(WalletError(.unavailable, "Service unavailable"))])
            let push = Fixtures.apnsPush(type: .lnurlpayInfo, payload: ["callback_url": "https://c", "reply_url": .string(server.url("/r"))])
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(result.disposition == .fellBack)
            #expect(result.content.title == "Receive Payment Failed")
            #expect(await server.requests.first?.json == ["status": "ERROR", "reason": "Service unavailable"])
        }
    }

    @Test("invoice: receive for the amount with the metadata's description hash; verify URL filled in")
    func invoice() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let push = Fixtures.apnsPush(
                type: .lnurlpayInvoice,
                payload: [
                    "amount": 21_000, "reply_url": .string(server.url("/reply/v1")),
                    "verify_url": "https://herald.example/lnurlpay/alice/{payment_hash}",
                    "comment": "thanks", "identifier": "alice@herald.example",
                ]
            )
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(result.disposition == .handled)
            #expect(result.content.title == "Fetching Invoice")
            let metadata = #"[["text/plain","Pay with LNURL"],["text/identifier","alice@herald.example"]]"#
            // The wallet is let go after the content is decided: waited for, as the other tests do.
            #expect(
                await wallet.callsAfterDisconnect() == [
                    .connect, .receiveLimits,
                    .receive(ReceiveRequest(amountMsat: 21_000, description: metadata, descriptionHash: true, payerNote: "thanks")),
                    .disconnect,
                ]
            )
            let hash = await wallet.invoice.paymentHash
            let request = try #require(await server.requests.first)
            #expect(request.bodyText == #"{"pr":"lnbc10u1ptest","routes":[],"verify":"https://herald.example/lnurlpay/alice/\#(hash)"}"#)
            #expect(request.headers["cache-control"] == nil)
        }
    }

    @Test("invoice: an amount outside the limits or a long comment is refused with an LNURL error")
    func invoiceRefusals() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let plugin = Fixtures.plugin(wallet: wallet)
            let tooBig = Fixtures.apnsPush(type: .lnurlpayInvoice, payload: ["amount": 9_000_000_000_000, "reply_url": .string(server.url("/a"))])
            let result = await plugin.handle(json: tooBig)
            #expect(result.disposition == .fellBack && result.content.title == "Receive Payment Failed")
            let longComment = Fixtures.apnsPush(
                type: .lnurlpayInvoice,
                payload: ["amount": 5_000, "reply_url": .string(server.url("/b")), "comment": .string(String(repeating: "x", count: 256))]
            )
            _ = await plugin.handle(json: longComment)
            let bodies = await server.requests.map(\.json)
            #expect(
                bodies == [
                    ["status": "ERROR", "reason": "Invalid amount requested 9000000000000"], ["status": "ERROR", "reason": "Comment is too long"],
                ])
            #expect(!(await wallet.calls).contains { if case .receive = $0 { return true } else { return false } })
        }
    }

    @Test("invoice: without identifier the metadata last answered in the info step is reused")
    func invoiceReusesInfoMetadata() async throws {
        let container = try Fixtures.temporaryDirectory()
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let plugin = Fixtures.plugin(wallet: wallet, record: ContainerRecordStore(container: container))
            _ = await plugin.handle(
                json: Fixtures.apnsPush(
                    type: .lnurlpayInfo,
                    payload: ["callback_url": "https://c", "reply_url": .string(server.url("/i")), "identifier": "zed@h.example"])
            )
            _ = await plugin.handle(
                json: Fixtures.apnsPush(type: .lnurlpayInvoice, payload: ["amount": 3_000, "reply_url": .string(server.url("/v"))]))
            let receive = await wallet.calls.compactMap { call -> ReceiveRequest? in
                if case .receive(let request) = call { return request }
                return nil
            }
            #expect(receive.first?.description == #"[["text/plain","Pay with LNURL"],["text/identifier","zed@h.example"]]"#)
        }
    }

    @Test("verify: settled releases the preimage and is cached a week; unsettled is not", arguments: [true, false])
    func verify(settled: Bool) async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            await wallet.setPayment(
                WalletPayment(
                    paymentHash: "ph", direction: .incoming, status: settled ? .complete : .pending, amountMsat: 21_000, preimage: "pre",
                    invoice: "lnbc1x"),
                hash: "ph"
            )
            let push = Fixtures.apnsPush(type: .lnurlpayVerify, payload: ["payment_hash": "ph", "reply_url": .string(server.url("/verify"))])
            let result = await Fixtures.plugin(wallet: wallet).handle(json: push)
            #expect(result.disposition == .handled && result.content.title == "Verifying Payment")
            #expect(await wallet.callsAfterDisconnect() == [.connect, .paymentByHash("ph"), .disconnect])
            let request = try #require(await server.requests.first)
            #expect(request.json == ["status": "OK", "settled": .bool(settled), "preimage": settled ? "pre" : .null, "pr": "lnbc1x"])
            #expect(request.headers["cache-control"] == (settled ? "max-age=604800" : "max-age=3"))
        }
    }

    @Test("a zap: the invoice commits to the zap request, and once the payment is seen settled its preimage goes to the zap URL")
    func zap() async throws {
        try await LoopbackHTTPServer.with { server in
            let wallet = RecordingWallet()
            let record = ContainerRecordStore(container: try Fixtures.temporaryDirectory())
            let plugin = Fixtures.plugin(wallet: wallet, record: record)
            let nostr = #"{"kind":9734,"content":"Zap!","tags":[["p","ab"]]}"#
            let invoicePush = Fixtures.apnsPush(
                type: .lnurlpayInvoice,
                payload: [
                    "amount": 21_000, "reply_url": .string(server.url("/reply/z1")), "identifier": "alice@herald.example",
                    "nostr": .string(nostr), "zap_url": .string(server.url("/zap/{payment_hash}")),
                ]
            )
            #expect(await plugin.handle(json: invoicePush).disposition == .handled)
            let receive = await wallet.calls.first { if case .receive = $0 { true } else { false } }
            #expect(receive == .receive(ReceiveRequest(amountMsat: 21_000, description: nostr, descriptionHash: true, payerNote: nil)))
            let hash = await wallet.invoice.paymentHash

            // Paid: the next push that finds it settled reports it.
            await wallet.setPayment(
                WalletPayment(paymentHash: hash, direction: .incoming, status: .complete, amountMsat: 21_000, preimage: "5d5d", invoice: "lnbc1x"),
                hash: hash)
            let verifyPush = Fixtures.apnsPush(
                type: .lnurlpayVerify, payload: ["payment_hash": .string(hash), "reply_url": .string(server.url("/verify"))])
            #expect(await plugin.handle(json: verifyPush).disposition == .handled)
            let report = try #require(await server.requests.first { $0.path == "/zap/\(hash)" })
            #expect(report.method == "POST")
            #expect(report.json == ["preimage": "5d5d"])
        }
    }

    @Test("verify: an unknown payment hash answers Not found")
    func verifyUnknown() async throws {
        try await LoopbackHTTPServer.with { server in
            let push = Fixtures.apnsPush(type: .lnurlpayVerify, payload: ["payment_hash": "nope", "reply_url": .string(server.url("/verify"))])
            let result = await Fixtures.plugin(wallet: RecordingWallet()).handle(json: push)
            #expect(result.disposition == .fellBack && result.content.title == "Payment Verification Failed")
            #expect(await server.requests.first?.json == ["status": "ERROR", "reason": "Not found"])
        }
    }
}
