import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

@Suite("Lightning addresses: LNURL-pay through a sleeping phone")
struct LnurlPayTests {
    /// A registered phone: its id, secret and push token.
    struct Phone {
        var id: String
        var secret: String
        var token: String
    }

    static func register(_ client: some TestClientProtocol, token name: String) async throws -> Phone {
        let token = TestToken.apns(name)
        let created = try await client.post(
            "/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(token)"}"#)
        return Phone(
            id: try #require(created.json["device_id"] as? String),
            secret: try #require(created.json["device_secret"] as? String),
            token: token
        )
    }

    static func claim(
        _ client: some TestClientProtocol, _ phone: Phone, _ username: String, secret: String? = nil
    )
        async throws -> TestResponse
    {
        try await client.post(
            "/api/v1/lnurlpay", json: #"{"device_id":"\#(phone.id)","username":"\#(username)"}"#,
            headers: [.authorization: "Bearer \(secret ?? phone.secret)"]
        )
    }

    static func release(_ client: some TestClientProtocol, _ phone: Phone) async throws
        -> TestResponse
    {
        try await client.execute(
            uri: "/api/v1/lnurlpay?device_id=\(phone.id)", method: .delete,
            headers: [.authorization: "Bearer \(phone.secret)"]
        )
    }

    static let metadata = LnurlPayMetadata(description: "Pay alice", identifier: "alice@nds.test")
        .jsonString

    /// Alice's wallet: limits 1 to 1,000 sat, comments up to 32 characters, invoices naming their amount.
    static func aliceWallet(_ push: TestPhone.Push) -> (json: String, cacheControl: String?)? {
        switch push.type {
        case "lnurlpay_info":
            let info = LnurlPayInfo(
                callback: push.payload["callback_url"] as? String ?? "", minSendable: 1_000,
                maxSendable: 1_000_000,
                metadata: metadata, commentAllowed: 32
            )
            return (
                String(decoding: try! WireJSON.encode(info), as: UTF8.self),
                "max-age=\(ReplyCacheLifetime.payInfo)"
            )
        case "lnurlpay_invoice":
            let amount = push.payload["amount"] as? Int ?? 0
            let hash = String(format: "%064x", amount)
            let verify = (push.payload["verify_url"] as? String).map {
                LnurlPayInvoice.verifyURL(template: $0, paymentHash: hash)
            }
            // The invoice names what the device was asked for, so a crossed answer shows.
            let pr =
                "lnbc\(amount)n-\(push.payload["metadata"] as? String == metadata ? "meta-ok" : "meta-bad")"
            return (
                String(
                    decoding: try! WireJSON.encode(LnurlPayInvoice(pr: pr, verify: verify)), as: UTF8.self),
                nil
            )
        case "lnurlpay_verify":
            let verification = LnurlPayVerification(
                settled: true, preimage: String(repeating: "ab", count: 32), pr: "lnbc")
            return (
                String(decoding: try! WireJSON.encode(verification), as: UTF8.self),
                "max-age=\(ReplyCacheLifetime.settledVerification)"
            )
        default:
            return nil
        }
    }

    /// A live NDS where a registered phone owns `username` and answers its pushes with `respond`
    /// while `body` runs; afterwards no reply may be left pending.
    static func withAddress(
        _ username: String,
        token: String,
        nds: TestNDS? = nil,
        providers: PushRouter? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        respond: @escaping @Sendable (TestPhone.Push) -> (json: String, cacheControl: String?)? =
            aliceWallet,
        _ body:
            @Sendable (_ nds: TestNDS, _ phone: TestPhone, _ client: any TestClientProtocol, _ port: Int)
            async throws -> Void
    ) async throws {
        let nds = try nds ?? TestNDS()
        let phone = TestPhone(nds: nds, platform: .ios, token: TestToken.apns(token))
        try await withPhoneHTTP { http in
            try await nds.app(providers: providers, now: now).test(.live) { client in
                let port = try #require(client.port)
                let owner = try await register(client, token: token)
                #expect(try await claim(client, owner, username).status == .created)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await phone.serve(port: port, using: http, respond: respond) }
                    defer { group.cancelAll() }
                    try await body(nds, phone, client, port)
                }
                #expect(try await nds.store.replyCounts().pending == 0)
            }
        }
    }

    @Test("a flood of fresh raw tokens holding requests cannot take the Lightning address's room: the payer still gets its pay request")
    func rawTokenFlood() async throws {
        var nds = try TestNDS()
        nds.settings.maxHeldReplies = 8
        nds.settings.maxHeldRepliesPerClient = 2
        nds.settings.replyTimeout = .seconds(2)
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { Task { try? await http.shutdown() } }
        try await Self.withAddress("alice", token: "alice-flood", nds: nds) {
            (nds: TestNDS, _: TestPhone, client: any TestClientProtocol, port: Int) async throws in
            let flood = #"{"template":"lnurlpay_info","data":{"callback_url":"https://x"}}"#
            let answered = NIOLockedValueBox<[HTTPResponse.Status]>([])
            // Each on a connection of its own, as an attacker's would be.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        var request = HTTPClientRequest(
                            url: "http://127.0.0.1:\(port)/api/v1/notify?platform=ios&token=\(String(format: "%064x", 0xF100D + index))")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(string: flood))
                        let status = HTTPResponse.Status(code: Int(try await http.execute(request, timeout: .seconds(10)).status.code))
                        answered.withLockedValue { $0.append(status) }
                    }
                }
                // The flood is held: ten answered at once, the other two waiting on replies of their own.
                #expect(
                    try await eventually {
                        let held = try await nds.store.replyCounts().pending
                        return held == 2 && answered.withLockedValue { $0.count } == 10
                    })
                // While it is: a real payer of alice@ is answered by her phone.
                let payer = try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get)
                #expect(payer.status == .ok, "\(payer.text)")
                try await group.waitForAll()
            }
            let statuses = answered.withLockedValue { $0 }
            // Two held (and timed out: nobody answers a made-up token), the rest refused at once.
            #expect(statuses.filter { $0 == .gatewayTimeout }.count == 2, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 10, "\(statuses)")
        }
    }

    @Test("a device asking to cache its pay request for a hundred years gets it kept a day at most")
    func cacheCapped() async throws {
        let clock = TestClock()
        let forever: @Sendable (TestPhone.Push) -> (json: String, cacheControl: String?)? = { push in
            guard let answer = Self.aliceWallet(push) else { return nil }
            return push.type == "lnurlpay_info" ? (answer.json, "max-age=3153600000") : answer
        }
        try await Self.withAddress("keeper", token: "keeper-token", now: clock.function, respond: forever) {
            (_: TestNDS, phone: TestPhone, client: any TestClientProtocol, _: Int) async throws in
            #expect(try await client.execute(uri: "/.well-known/lnurlp/keeper", method: .get).status == .ok)
            clock.advance(by: .seconds(3600))
            #expect(try await client.execute(uri: "/.well-known/lnurlp/keeper", method: .get).status == .ok)
            #expect(try await phone.pushes(after: 0).filter { $0.type == "lnurlpay_info" }.count == 1)
            // A day and a second later the phone is asked again.
            clock.advance(by: .seconds(86_401 - 3600))
            #expect(try await client.execute(uri: "/.well-known/lnurlp/keeper", method: .get).status == .ok)
            #expect(try await phone.pushes(after: 0).filter { $0.type == "lnurlpay_info" }.count == 2)
        }
    }

    @Test("a pay request advertising more than every bitcoin is refused (502), and a payer's huge amount never traps")
    func absurdMaxSendable() async throws {
        let greedy: @Sendable (TestPhone.Push) -> (json: String, cacheControl: String?)? = { push in
            guard push.type == "lnurlpay_info" else { return nil }
            let info = LnurlPayInfo(
                callback: push.payload["callback_url"] as? String ?? "", minSendable: 1_000, maxSendable: UInt64.max,
                metadata: Self.metadata
            )
            return (String(decoding: try! WireJSON.encode(info), as: UTF8.self), nil)
        }
        try await Self.withAddress("greedy", token: "greedy-token", respond: greedy) { _, _, client, _ in
            let info = try await client.execute(uri: "/.well-known/lnurlp/greedy", method: .get)
            #expect(info.status == .badGateway)
            #expect(info.json["status"] as? String == "ERROR")
            let callback = try await client.execute(uri: "/lnurlp/greedy/callback?amount=18446744073709551615", method: .get)
            #expect(callback.status == .badRequest)
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
        }
    }

    @Test(
        "a device claims a username with its secret: LUD-16 names, one owner per name, rename and release"
    )
    func claimRenameRelease() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            let alice = try await Self.register(client, token: "alice-token")
            let bob = try await Self.register(client, token: "bob-token")

            let claimed = try await Self.claim(client, alice, "alice")
            #expect(claimed.status == .created)
            #expect(claimed.json["lightning_address"] as? String == "alice@nds.test")
            #expect(claimed.json["lnurlp_url"] as? String == "http://nds.test/.well-known/lnurlp/alice")
            #expect(try await Self.claim(client, alice, "alice").status == .ok)

            let taken = try await Self.claim(client, bob, "alice")
            #expect(taken.status == .conflict)
            #expect(taken.json["error"] as? String == "username_taken")
            for bad in ["Alice", "al ice", "alice!", "", String(repeating: "a", count: 65), "ålice"] {
                let refused = try await Self.claim(client, bob, bad)
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.json["error"] as? String == "invalid_username")
            }
            #expect(try await Self.claim(client, bob, "bob_the-builder.2").status == .created)
            let wrongSecret = try await Self.claim(client, bob, "bobby", secret: alice.secret)
            #expect(wrongSecret.status == .unauthorized)

            let renamed = try await Self.claim(client, alice, "alice2")
            #expect(renamed.status == .ok)
            #expect(renamed.json["previous"] as? String == "alice")
            #expect(try await Self.claim(client, bob, "alice").status == .ok)  // freed by the rename
            #expect(try await nds.store.lightningAddress(username: "alice")?.device.id == bob.id)

            #expect(try await Self.release(client, alice).status == .noContent)
            let again = try await Self.release(client, alice)
            #expect(again.status == .notFound)
            #expect(again.json["error"] as? String == "no_username")
            #expect(try await nds.store.lightningAddress(username: "alice2") == nil)

            // Deleting the device releases its name.
            _ = try await client.execute(
                uri: "/api/v1/devices/\(bob.id)", method: .delete,
                headers: [.authorization: "Bearer \(bob.secret)"])
            #expect(try await nds.store.lightningAddress(username: "alice") == nil)
        }
    }

    @Test(
        "a payer walks info → invoice → verify for alice@nds.test and gets spec-valid JSON at each step"
    )
    func payerWalk() async throws {
        try await Self.withAddress("alice", token: "alice-walk") { nds, phone, client, _ in
            // LUD-06/16: the pay request, metadata exactly as the device wrote it.
            let infoResponse = try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get)
            #expect(infoResponse.status == .ok)
            let info = try JSONDecoder().decode(LnurlPayInfo.self, from: Data(buffer: infoResponse.body))
            #expect(info.tag == "payRequest")
            #expect(info.callback == "http://nds.test/lnurlp/alice/callback")
            #expect(info.minSendable == 1_000 && info.maxSendable == 1_000_000)
            #expect(info.metadata == Self.metadata)
            #expect(
                infoResponse.text.contains(
                    #""metadata":"[[\"text/plain\",\"Pay alice\"],[\"text/identifier\",\"alice@nds.test\"]]""#
                ))
            #expect(infoResponse.headers[.cacheControl] == "max-age=86400")

            // The info push carried the identifier and the callback.
            let infoPush = try #require(
                try await phone.pushes(after: 0).first { $0.type == "lnurlpay_info" })
            #expect(infoPush.payload["identifier"] as? String == "alice@nds.test")
            #expect(
                infoPush.payload["callback_url"] as? String == "http://nds.test/lnurlp/alice/callback")

            // LUD-06/21 (+ LUD-12 comment): the invoice, committing to the same metadata.
            let invoiceResponse = try await client.execute(
                uri: "/lnurlp/alice/callback?amount=21000&comment=thanks", method: .get)
            #expect(invoiceResponse.status == .ok)
            let invoice = try JSONDecoder().decode(
                LnurlPayInvoice.self, from: Data(buffer: invoiceResponse.body))
            #expect(invoice.pr == "lnbc21000n-meta-ok")
            #expect(invoice.routes.isEmpty)
            let hash = String(format: "%064x", 21000)
            #expect(invoice.verify == "http://nds.test/lnurlp/alice/verify/\(hash)")
            let invoicePush = try #require(
                try await phone.pushes(after: 0).first { $0.type == "lnurlpay_invoice" })
            #expect(invoicePush.payload["amount"] as? Int == 21000)
            #expect(invoicePush.payload["comment"] as? String == "thanks")
            #expect(invoicePush.payload["identifier"] as? String == "alice@nds.test")
            #expect(invoicePush.payload["metadata"] as? String == Self.metadata)
            #expect(
                invoicePush.payload["verify_url"] as? String
                    == "http://nds.test/lnurlp/alice/verify/{payment_hash}")

            // LUD-21: settled.
            let verifyPath = String(try #require(invoice.verify).dropFirst("http://nds.test".count))
            let verifyResponse = try await client.execute(uri: verifyPath, method: .get)
            #expect(verifyResponse.status == .ok)
            #expect(verifyResponse.json["status"] as? String == "OK")
            #expect(verifyResponse.json["settled"] as? Bool == true)
            #expect(verifyResponse.json["preimage"] as? String == String(repeating: "ab", count: 32))
            #expect(verifyResponse.json["pr"] as? String == "lnbc")

            // Cache-Control from the device: polling payers do not wake the phone again.
            for _ in 0..<3 {
                #expect(
                    try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get).text
                        == infoResponse.text)
                #expect(try await client.execute(uri: verifyPath, method: .get).text == verifyResponse.text)
            }
            let pushes = try await phone.pushes(after: 0)
            #expect(pushes.filter { $0.type == "lnurlpay_info" }.count == 1)
            #expect(pushes.filter { $0.type == "lnurlpay_verify" }.count == 1)
        }
    }

    @Test("amounts out of range and over-long comments are LNURL errors without waking the phone")
    func refusedPayments() async throws {
        try await Self.withAddress("alice", token: "alice-limits") { nds, phone, client, _ in
            #expect(
                try await client.execute(uri: "/.well-known/lnurlp/ALICE", method: .get).status == .ok)
            let pushed = try await phone.pushes(after: 0).count
            let cases: [(String, String)] = [
                ("/lnurlp/alice/callback?amount=999", "Amount out of range"),
                ("/lnurlp/alice/callback?amount=1000001", "Amount out of range"),
                ("/lnurlp/alice/callback", "invalid amount"),
                ("/lnurlp/alice/callback?amount=-5", "invalid amount"),
                (
                    "/lnurlp/alice/callback?amount=5000&comment=" + String(repeating: "x", count: 33),
                    "Comment is too long"
                ),
            ]
            for (path, reason) in cases {
                let refused = try await client.execute(uri: path, method: .get)
                #expect(refused.status == .badRequest, "\(path)")
                #expect(refused.json["status"] as? String == "ERROR")
                #expect((refused.json["reason"] as? String)?.contains(reason) == true, "\(refused.text)")
            }
            #expect(try await phone.pushes(after: 0).count == pushed)
            let bounds = try await client.execute(
                uri: "/lnurlp/alice/callback?amount=1000000&comment=" + String(repeating: "y", count: 32),
                method: .get)
            #expect(bounds.status == .ok)
        }
    }

    @Test("an unknown name, a sleeping phone and a dead token each reach the payer as an LNURL error")
    func payerErrors() async throws {
        var configured = try TestNDS()
        configured.settings.replyTimeout = .seconds(1)
        let nds = configured
        try await nds.app().test(.live) { client in
            let unknown = try await client.execute(uri: "/.well-known/lnurlp/nobody", method: .get)
            #expect(unknown.status == .notFound)
            #expect(unknown.json["status"] as? String == "ERROR")
            #expect((unknown.json["reason"] as? String)?.contains("nobody@nds.test") == true)
            #expect(
                try await client.execute(uri: "/lnurlp/nobody/callback?amount=1000", method: .get).json[
                    "status"] as? String == "ERROR")

            let sleeper = try await Self.register(client, token: "61736c6565702d746f6b656e")
            _ = try await Self.claim(client, sleeper, "sleeper")
            let asleep = try await client.execute(uri: "/.well-known/lnurlp/sleeper", method: .get)
            #expect(asleep.status == .gatewayTimeout)
            #expect(asleep.json["status"] as? String == "ERROR")
            #expect((asleep.json["reason"] as? String)?.contains("did not answer") == true)
            let noInfo = try await client.execute(
                uri: "/lnurlp/sleeper/callback?amount=1000", method: .get)
            #expect(noInfo.json["status"] as? String == "ERROR")
            let badHash = try await client.execute(uri: "/lnurlp/sleeper/verify/nothex", method: .get)
            #expect(badHash.status == .badRequest)
            #expect(badHash.json["status"] as? String == "ERROR")

            try await nds.store.markDead(
                platform: .ios, token: "61736c6565702d746f6b656e", reason: "Unregistered", now: Date())
            let dead = try await client.execute(uri: "/.well-known/lnurlp/sleeper", method: .get)
            #expect(dead.status == .gone)
            #expect(dead.json["status"] as? String == "ERROR")
            #expect((dead.json["reason"] as? String)?.contains("can no longer be reached") == true)
            #expect(try await nds.store.replyCounts().pending == 0)
        }
    }

    @Test("a device's own LNURL error reaches the payer as it sent it, and is not cached")
    func deviceError() async throws {
        // swift-format-ignore: OnlyOneTrailingClosureArgument
        try await Self.withAddress(
            "broke", token: "broke",
            respond: { _ in
                (#"{"status":"ERROR","reason":"Wallet unavailable"}"#, "max-age=600")
            }
        ) { _, phone, client, _ in
            for _ in 0..<2 {
                let response = try await client.execute(uri: "/.well-known/lnurlp/broke", method: .get)
                #expect(response.status == .ok)
                #expect(response.text == #"{"status":"ERROR","reason":"Wallet unavailable"}"#)
            }
            #expect(try await phone.pushes(after: 0).count == 2)
        }
    }

    @Test("200 payers at once against one username each get their own invoice, none crossed")
    func manyPayers() async throws {
        let payers = 200
        var busy = try TestNDS()
        // Every payer wakes the one phone: lift its per-target limit, this is about concurrency.
        busy.settings.targetPushesPerMinute = 100_000
        busy.settings.targetPushBurst = 100_000
        try await Self.withAddress("alice", token: "alice-busy", nds: busy) { nds, phone, client, port in
            #expect(
                try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get).status == .ok)
            let payerHTTP = TestPhone.makeHTTPClient()
            let results = try await withThrowingTaskGroup(of: (Int, Int, String).self) { group in
                for payer in 0..<payers {
                    let amount = (1_000 + payer) * 100
                    group.addTask {
                        let url = "http://127.0.0.1:\(port)/lnurlp/alice/callback?amount=\(amount)"
                        let (status, body) = try await TestPhone.get(
                            HTTPClientRequest(url: url), using: payerHTTP)
                        return (amount, status, body)
                    }
                }
                var results: [(Int, Int, String)] = []
                for try await result in group { results.append(result) }
                return results
            }
            try await payerHTTP.shutdown()
            #expect(results.count == payers)
            for (amount, status, body) in results {
                #expect(status == 200, "\(body)")
                let invoice = try JSONDecoder().decode(LnurlPayInvoice.self, from: Data(body.utf8))
                #expect(invoice.pr == "lnbc\(amount)n-meta-ok")
                #expect(invoice.verify?.hasSuffix(String(format: "%064x", amount)) == true)
            }
            #expect(
                try await phone.pushes(after: 0).filter { $0.type == "lnurlpay_invoice" }.count == payers)
            let counts = try await nds.store.replyCounts()
            #expect(counts.pending == 0)
            #expect(counts.answered == payers + 1)
        }
    }
}
