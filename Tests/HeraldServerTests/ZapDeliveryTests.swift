import AsyncHTTPClient
import Crypto
import Foundation
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice
import HeraldNostr
import HeraldPush
import HeraldSecp256k1
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing

/// Zaps (NIP-57) on a Herald Lightning address: advertised, checked, committed to, and the
/// receipt published to the request's relays (look-alikes over TLS) through the outbox.
@Suite("Zaps on the Lightning address")
struct ZapDeliveryTests {
    static let payURL = "http://nds.test/.well-known/lnurlp/alice"
    static let payer = NostrSecretKey.generate().key
    static let recipient = String(repeating: "7a", count: 32)

    /// A zap request as a Nostr client signs it.
    static func zapRequest(relays: [String], amount: UInt64 = 21_000, extra: [[String]] = [], content: String = "Zap!") -> String {
        var tags: [[String]] = [["relays"] + relays, ["p", recipient], ["amount", String(amount)], ["lnurl", LNURL.encode(payURL)]]
        tags += extra
        return NostrEvent.signed(kind: 9734, tags: tags, content: content, createdAt: 1_764_000_000, by: payer).json
    }

    /// The callback URL a client builds: `nostr` JSON- then URI-encoded.
    static func callback(_ request: String, amount: UInt64 = 21_000) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return "/lnurlp/alice/callback?amount=\(amount)&nostr=\(request.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
    }

    /// Alice's wallet, answering as `HeraldDevice` does: a real BOLT11 invoice whose description
    /// hash commits to the zap request (or, when told to misbehave, to the metadata).
    final class ZapWallet: Sendable {
        let issuer = Bolt11InvoiceIssuer(key: NodeSecretKey.random())
        let preimages = NIOLockedValueBox([String: String]())
        let commitToMetadata: Bool

        init(commitToMetadata: Bool = false) { self.commitToMetadata = commitToMetadata }

        func respond(_ push: TestPhone.Push) -> (json: String, cacheControl: String?)? {
            switch push.type {
            case "lnurlpay_invoice":
                let amount = UInt64(push.payload["amount"] as? Int ?? 0)
                let nostr = push.payload["nostr"] as? String
                let preimage = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
                let hash = Array(SHA256.hash(data: preimage))
                let description = commitToMetadata ? LnurlPayTests.metadata : (nostr ?? LnurlPayTests.metadata)
                let pr = try! issuer.invoice(
                    for: InvoiceTerms(
                        amountMsat: amount, paymentHash: hash, description: description, descriptionHash: true, createdAt: Date(),
                        expirySeconds: 3600))
                preimages.withLockedValue { $0[hash.lowercaseHex] = preimage.lowercaseHex }
                return (String(decoding: try! WireJSON.encode(LnurlPayInvoice(pr: pr)), as: UTF8.self), nil)
            case "lnurlpay_verify":
                let hash = push.payload["payment_hash"] as? String ?? ""
                let preimage = preimages.withLockedValue { $0[hash] }
                let answer = LnurlPayVerification(settled: preimage != nil, preimage: preimage, pr: "lnbc")
                return (String(decoding: try! WireJSON.encode(answer), as: UTF8.self), nil)
            default:
                return LnurlPayTests.aliceWallet(push)
            }
        }
    }

    /// An NDS taking zaps with `key`, publishing through a relay client trusting `caFile`.
    static func nds(key: NostrSecretKey, allowPrivateRelays: Bool = true) throws -> TestNDS {
        var nds = try TestNDS()
        nds.settings.zaps = ZapSettings(key: key, allowPrivateRelays: allowPrivateRelays)
        return nds
    }

    static func providers(_ nds: TestNDS, caFile: String) throws -> PushRouter {
        nds.localRouter().publishing(to: try NostrRelayProvider(configuration: .init(allowPrivateRelays: true, extraTrustRootsPEMFile: caFile)))
    }

    /// Two relays, a key, an NDS whose phone owns `alice` and answers with `wallet`.
    static func withZaps(
        wallet: ZapWallet = ZapWallet(), allowPrivateRelays: Bool = true,
        _ body:
            @Sendable (_ relays: [(MockNostrRelay, String)], _ key: NostrSecretKey, _ nds: TestNDS, _ client: any TestClientProtocol, _ port: Int)
            async throws -> Void
    ) async throws {
        let certificate = try TestCertificate.make()
        let first = MockNostrRelay(certificate: certificate)
        let second = MockNostrRelay(certificate: certificate)
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let key = NostrSecretKey.generate().key
        let nds = try Self.nds(key: key, allowPrivateRelays: allowPrivateRelays)
        try await first.withRunning { one in
            try await second.withRunning { two in
                try await LnurlPayTests.withAddress(
                    "alice", token: "alice-zaps", nds: nds, providers: try Self.providers(nds, caFile: caFile),
                    respond: { wallet.respond($0) }
                ) { nds, _, client, port in
                    // A payer reads the pay request before the callback.
                    #expect(try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get).status == .ok)
                    try await body([(first, one.relayURL), (second, two.relayURL)], key, nds, client, port)
                }
            }
        }
    }

    @Test("the pay request advertises zaps; a zap's invoice commits to the request; once paid, every relay gets one receipt that verifies")
    func zap() async throws {
        try await Self.withZaps { relays, key, nds, client, _ in
            let info = try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get)
            #expect(info.status == .ok)
            #expect(info.json["allowsNostr"] as? Bool == true)
            #expect(info.json["nostrPubkey"] as? String == key.publicKeyHex)

            let request = Self.zapRequest(relays: relays.map(\.1))
            let invoice = try await client.execute(uri: Self.callback(request), method: .get)
            #expect(invoice.status == .ok, "\(invoice.text)")
            let pr = try #require(invoice.json["pr"] as? String)
            let decoded = try Bolt11Invoice.decode(pr).invoice
            #expect(decoded.descriptionHash == Array(SHA256.hash(data: Data(request.utf8))))
            let paymentHash = try #require(decoded.paymentHash?.lowercaseHex)
            #expect(try await nds.store.zap(paymentHash: paymentHash)?.request == request)

            // The payer checks: the verify answer says settled, with the preimage.
            let verify = try await client.execute(uri: "/lnurlp/alice/verify/\(paymentHash)", method: .get)
            #expect(verify.json["settled"] as? Bool == true)
            for (relay, _) in relays {
                let received = try #require(try await relay.events.waitFor(count: 1).first)
                let receipt = try WireJSON.decode(NostrEvent.self, from: received.event)
                #expect(receipt.isValid)
                #expect(receipt.kind == 9735)
                #expect(receipt.pubkey == key.publicKeyHex)
                let description = try #require(receipt.tags(named: "description").first?.first)
                #expect(description == request)
                #expect(receipt.tags(named: "bolt11").first?.first == pr)
                #expect(receipt.tags(named: "p").first?.first == Self.recipient)
                #expect(receipt.tags(named: "P").first?.first == Self.payer.publicKeyHex)
                let preimage = try #require(receipt.tags(named: "preimage").first?.first)
                #expect(Array(SHA256.hash(data: try #require([UInt8](hex: preimage)))).lowercaseHex == paymentHash)
            }
            // The phone reports it too, and the payer asks again: nothing is published twice.
            let preimage = try #require(
                try await relays[0].0.events.all.first.map { try WireJSON.decode(NostrEvent.self, from: $0.event) }?
                    .tags(named: "preimage").first?.first)
            let report = try await client.post("/lnurlp/alice/zap/\(paymentHash)", json: #"{"preimage":"\#(preimage)"}"#)
            #expect(report.status == .accepted, "\(report.text)")
            #expect(report.json["relays"] as? Int == 2)
            #expect((report.json["job_ids"] as? [String])?.isEmpty == true)
            // No job was made for it, and every earlier one is done: nothing left to publish twice.
            #expect(try await eventually { try await nds.store.outboxSummary(now: Date()).total == OutboxCounts() })
            for (relay, _) in relays { #expect(await relay.events.count == 1) }
        }
    }

    @Test("the phone's report publishes the receipt; a wrong preimage and an unknown hash are refused")
    func report() async throws {
        let wallet = ZapWallet()
        try await Self.withZaps(wallet: wallet) { relays, _, _, client, _ in
            let invoice = try await client.execute(uri: Self.callback(Self.zapRequest(relays: [relays[0].1])), method: .get)
            let pr = try #require(invoice.json["pr"] as? String)
            let hash = try #require(try Bolt11Invoice.decode(pr).invoice.paymentHash?.lowercaseHex)
            let wrong = try await client.post("/lnurlp/alice/zap/\(hash)", json: #"{"preimage":"\#(String(repeating: "00", count: 32))"}"#)
            #expect(wrong.status == .badRequest)
            #expect(wrong.json["error"] as? String == "invalid_preimage")
            let preimage = try #require(wallet.preimages.withLockedValue { $0[hash] })
            let unknown = String(repeating: "0", count: 64)
            #expect(try await client.post("/lnurlp/alice/zap/\(unknown)", json: #"{"preimage":"\#(preimage)"}"#).status == .badRequest)
            let report = try await client.post("/lnurlp/alice/zap/\(hash)", json: #"{"preimage":"\#(preimage)"}"#)
            #expect(report.status == .accepted, "\(report.text)")
            #expect((report.json["job_ids"] as? [String])?.count == 1)
            _ = try await relays[0].0.events.waitFor(count: 1)
            #expect(await relays[1].0.events.count == 0)
        }
    }

    /// A zap request breaking `rule`.
    static func breaking(_ rule: String, relay: String) -> String {
        switch rule {
        case "signature":
            var event = try! WireJSON.decode(NostrEvent.self, from: Data(zapRequest(relays: [relay]).utf8))
            event.content = "forged"
            return event.json
        case "p": return zapRequest(relays: [relay], extra: [["p", String(repeating: "11", count: 32)]])
        case "e": return zapRequest(relays: [relay], extra: [["e", String(repeating: "ab", count: 32)], ["e", String(repeating: "cd", count: 32)]])
        case "amount": return zapRequest(relays: [relay], amount: 22_000)
        case "relays": return zapRequest(relays: ["https://relay.example"])
        default: return NostrEvent.signed(kind: 1, tags: [["relays", relay], ["p", recipient]], content: "", createdAt: 1, by: payer).json
        }
    }

    @Test("forty concurrent reports of one payment, over their own connections, make one job per relay and one receipt each")
    func concurrentReports() async throws {
        let wallet = ZapWallet()
        try await Self.withZaps(wallet: wallet) { relays, _, nds, client, port in
            let invoice = try await client.execute(uri: Self.callback(Self.zapRequest(relays: relays.map(\.1))), method: .get)
            let pr = try #require(invoice.json["pr"] as? String)
            let hash = try #require(try Bolt11Invoice.decode(pr).invoice.paymentHash?.lowercaseHex)
            let preimage = try #require(wallet.preimages.withLockedValue { $0[hash] })
            let answers = try await withPhoneHTTP { http in
                try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
                    for _ in 0..<40 {
                        group.addTask {
                            try await TestPhone.answer(
                                "http://nds.test/lnurlp/alice/zap/\(hash)", json: #"{"preimage":"\#(preimage)"}"#, port: port, using: http)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(answers.allSatisfy { $0.status == 202 }, "\(answers.filter { $0.status != 202 })")
            let jobs = answers.flatMap { answer in
                ((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any])?["job_ids"] as? [String] ?? []
            }
            #expect(jobs.count == 2)
            for (relay, _) in relays { _ = try await relay.events.waitFor(count: 1) }
            // Every job made is sent and done: nothing left that could publish again.
            #expect(try await eventually { try await nds.store.outboxSummary(now: Date()).total == OutboxCounts() })
            for (relay, _) in relays { #expect(await relay.events.count == 1) }
        }
    }

    @Test("each rule is refused over HTTP with 400 and the LNURL error naming it", arguments: ["signature", "p", "e", "amount", "relays", "kind"])
    func rules(rule: String) async throws {
        try await Self.withZaps { relays, _, _, client, _ in
            let response = try await client.execute(uri: Self.callback(Self.breaking(rule, relay: relays[0].1)), method: .get)
            #expect(response.status == .badRequest)
            #expect(response.json["status"] as? String == "ERROR")
            #expect((response.json["reason"] as? String)?.contains("zap request \(rule)") == true, "\(response.text)")
        }
    }

    @Test(
        "relays on loopback are refused unless allowed; an address without zaps configured refuses nostr; an invoice not committing to the request is a 502"
    )
    func refusals() async throws {
        try await Self.withZaps(allowPrivateRelays: false) { relays, _, _, client, _ in
            let response = try await client.execute(uri: Self.callback(Self.zapRequest(relays: [relays[0].1])), method: .get)
            #expect(response.status == .badRequest)
            #expect((response.json["reason"] as? String)?.contains("relays") == true, "\(response.text)")
        }
        try await LnurlPayTests.withAddress("alice", token: "alice-nozaps") { _, _, client, _ in
            #expect(try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get).json["allowsNostr"] == nil)
            let response = try await client.execute(uri: Self.callback(Self.zapRequest(relays: ["wss://relay.example"])), method: .get)
            #expect(response.status == .badRequest)
            #expect((response.json["reason"] as? String)?.contains("does not take zaps") == true)
        }
        try await Self.withZaps(wallet: ZapWallet(commitToMetadata: true)) { relays, _, _, client, _ in
            let response = try await client.execute(uri: Self.callback(Self.zapRequest(relays: [relays[0].1])), method: .get)
            #expect(response.status == .badGateway)
            #expect((response.json["reason"] as? String)?.contains("does not commit to the zap request") == true)
        }
    }

    @Test("a relay that refuses is dead-lettered and one that drops is retried, each on its own")
    func refusingAndDroppingRelays() async throws {
        let wallet = ZapWallet()
        try await Self.withZaps(wallet: wallet) { relays, _, nds, client, _ in
            await relays[0].0.script.always(.refused("blocked: zaps not welcome"), for: MockNostrRelay.scriptKey)
            await relays[1].0.script.enqueue([.drop, .drop], for: MockNostrRelay.scriptKey)
            let invoice = try await client.execute(uri: Self.callback(Self.zapRequest(relays: relays.map(\.1))), method: .get)
            let pr = try #require(invoice.json["pr"] as? String)
            let hash = try #require(try Bolt11Invoice.decode(pr).invoice.paymentHash?.lowercaseHex)
            let preimage = try #require(wallet.preimages.withLockedValue { $0[hash] })
            let report = try await client.post("/lnurlp/alice/zap/\(hash)", json: #"{"preimage":"\#(preimage)"}"#)
            let ids = try #require(report.json["job_ids"] as? [String])
            #expect(ids.count == 2)
            // The dropping relay gets it on the third try; the refusing one once, then never again.
            let dropped = try await relays[1].0.events.waitFor(count: 3)
            #expect(dropped.map(\.answer) == [.drop, .drop, .accepted])
            #expect(
                try await eventually {
                    try await nds.store.deadLetters(matching: DeadLetterFilter(destination: .nostr), limit: 10, after: nil).letters.count == 1
                })
            let letter = try #require(
                try await nds.store.deadLetters(matching: DeadLetterFilter(destination: .nostr), limit: 10, after: nil).letters.first)
            #expect(letter.lastError?.contains("blocked: zaps not welcome") == true)
            #expect(await relays[0].0.events.count == 1)
        }
    }

    @Test("a receipt settled while its relay is down is published after a restart, once the relay is up")
    func restartBetweenSettlementAndPublication() async throws {
        let certificate = try TestCertificate.make()
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let port = try LoopbackPort.free()
        let relayURL = "wss://localhost:\(port)"
        let key = NostrSecretKey.generate().key
        let nds = try Self.nds(key: key)
        let wallet = ZapWallet()
        let providers = try Self.providers(nds, caFile: caFile)
        // Before the restart: the payment is reported, the relay is not there.
        // swift-format-ignore: OnlyOneTrailingClosureArgument
        try await LnurlPayTests.withAddress("alice", token: "alice-restart", nds: nds, providers: providers, respond: { wallet.respond($0) }) {
            nds, _, client, _ in
            #expect(try await client.execute(uri: "/.well-known/lnurlp/alice", method: .get).status == .ok)
            let invoice = try await client.execute(uri: Self.callback(Self.zapRequest(relays: [relayURL])), method: .get)
            let pr = try #require(invoice.json["pr"] as? String)
            let hash = try #require(try Bolt11Invoice.decode(pr).invoice.paymentHash?.lowercaseHex)
            let preimage = try #require(wallet.preimages.withLockedValue { $0[hash] })
            let report = try await client.post("/lnurlp/alice/zap/\(hash)", json: #"{"preimage":"\#(preimage)"}"#)
            let jobID = try #require((report.json["job_ids"] as? [String])?.first)
            // Tried against the missing relay and failed: the receipt waits in the outbox.
            #expect(
                try await eventually {
                    let status = try await nds.store.status(jobID: jobID)
                    return status?.state == .pending && (status?.attempts ?? 0) >= 1 && status?.lastError != nil
                })
        }
        // After it: a new server on the same database, the relay up on its port.
        let relay = MockNostrRelay(certificate: certificate)
        let running = try await relay.start(port: port)
        do {
            try await nds.app(providers: providers).test(.live) { _ in
                let received = try #require(try await relay.events.waitFor(count: 1, timeout: .seconds(20)).first)
                let receipt = try WireJSON.decode(NostrEvent.self, from: received.event)
                #expect(receipt.isValid)
                #expect(receipt.pubkey == key.publicKeyHex)
            }
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }
}
