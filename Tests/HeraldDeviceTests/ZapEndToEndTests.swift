import Crypto
import Foundation
import HeraldBolt11
import HeraldNostr
import HeraldTestSupport
import HeraldWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A zap paid through `herald serve` and `herald-device` (the development wallet's real BOLT11
/// invoices): the receipt reaches a relay look-alike over TLS, signed by the key the address
/// advertises, describing the request, its invoice committing to it.
@Suite("Zaps through herald serve and herald-device", .serialized)
struct ZapEndToEndTests {
    /// How the payer's client writes the query: percent-encoding everything, or as an HTML form
    /// (Python's `urlencode`, Java's `URLEncoder`, `URLSearchParams`): a space is `+`, a plus `%2B`.
    enum QueryEncoding: String, CaseIterable, Sendable {
        case percent, form

        func encode(_ value: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            switch self {
            case .percent:
                return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
            case .form:
                allowed.insert(" ")
                return (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: " ", with: "+")
            }
        }
    }

    @Test(
        "a zap request signed by a payer's key, paid, becomes a receipt on the relay that verifies; form-encoded, to a relay named by its address",
        arguments: QueryEncoding.allCases)
    func zap(_ encoding: QueryEncoding) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-zap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificate = try TestCertificate.make()
        let caFile = folder.appendingPathComponent("ca.pem").path
        try certificate.writeCA(to: caFile)
        let relay = MockNostrRelay(certificate: certificate)
        let running = try await relay.start()
        defer { Task { await running.stop() } }

        // Herald's key, as `herald nostr keygen` writes it.
        let keyFile = folder.appendingPathComponent("nostr.key").path
        let keygen = try await ProgramRun.output(try HeraldServeProcess.binary(), ["nostr", "keygen", "--out", keyFile])
        #expect(keygen.status == 0)
        let advertised = keygen.output.trimmingCharacters(in: .whitespacesAndNewlines)

        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_NOSTR_SECRET_KEY_FILE"] = keyFile
        environment["HERALD_TLS_CA_FILE"] = caFile
        for variable in ["HTTPS_PROXY", "https_proxy", "GOOGLE_APPLICATION_CREDENTIALS"] { environment[variable] = nil }
        let server = try await HeraldServeProcess.running(
            arguments: ["--nostr-allow-private-relays", "true"], folder: folder.appendingPathComponent("server"), environment: environment)
        defer { Task { await server.stop() } }
        let base = server.baseURL
        let phoneFolder = folder.appendingPathComponent("phone")
        let phone = try ChildProcess(arguments: ["listen", "--server", base, "--platform", "android", "--wallet", phoneFolder.path])
        defer { phone.stop() }
        let registered = try #require(await phone.nextLine(within: .seconds(30)))
        let registration = try #require(try JSONSerialization.jsonObject(with: Data(registered.utf8)) as? [String: Any])
        let deviceID = try #require(registration["device_id"] as? String)
        let saved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: phoneFolder.appendingPathComponent("registration.json"))) as? [String: Any]
        let secret = try #require(saved?["device_secret"] as? String)

        let claim = try await Self.http("POST", "\(base)/api/v1/lnurlpay", json: #"{"device_id":"\#(deviceID)","username":"alice"}"#, bearer: secret)
        #expect(claim.status == 201, "\(claim.body)")
        let info = try await Self.http("GET", "\(base)/.well-known/lnurlp/alice")
        let pay = try #require(try JSONSerialization.jsonObject(with: Data(info.body.utf8)) as? [String: Any])
        #expect(pay["allowsNostr"] as? Bool == true)
        #expect(pay["nostrPubkey"] as? String == advertised)

        // The payer's client: a zap request signed by a key of its own.
        let payer = NostrSecretKey.generate().key
        // The form-encoded payer names the relay by its address (TLS without SNI).
        let relayURL = encoding == .form ? running.relayURL.replacingOccurrences(of: "wss://localhost:", with: "wss://127.0.0.1:") : running.relayURL
        let request = NostrEvent.signed(
            kind: 9734,
            tags: [
                ["relays", relayURL], ["p", String(repeating: "5c", count: 32)], ["amount", "21000"],
                ["lnurl", LNURL.encode("\(base)/.well-known/lnurlp/alice")],
            ],
            content: "Great post! 1+1 = 2", createdAt: Int64(Date().timeIntervalSince1970), by: payer
        ).json
        let callback = try await Self.http("GET", "\(base)/lnurlp/alice/callback?amount=21000&nostr=\(encoding.encode(request))")
        #expect(callback.status == 200, "\(callback.body)")
        let invoiceAnswer = try #require(try JSONSerialization.jsonObject(with: Data(callback.body.utf8)) as? [String: Any])
        let pr = try #require(invoiceAnswer["pr"] as? String)
        let verifyURL = try #require(invoiceAnswer["verify"] as? String)
        let invoice = try Bolt11Invoice.decode(pr).invoice
        let paymentHash = try #require(invoice.paymentHash?.lowercaseHex)
        #expect(invoice.descriptionHash == Array(SHA256.hash(data: Data(request.utf8))))

        // Paid: the wallet settles, the payer's client checks LUD-21.
        let settle = try await ProgramRun.output(
            try HeraldServeProcess.binary("herald-device"), ["wallet", "settle", paymentHash, "--wallet", phoneFolder.path])
        #expect(settle.status == 0, "\(settle.output)")
        #expect(settle.output.contains(#""settled":true"#), "\(settle.output)")
        var settled = false
        for _ in 0..<40 where !settled {
            let verify = try await Self.http("GET", verifyURL)
            settled = (try? JSONSerialization.jsonObject(with: Data(verify.body.utf8)) as? [String: Any])?["settled"] as? Bool == true
            if !settled { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(settled)

        let received = try #require(try await relay.events.waitFor(count: 1, timeout: .seconds(20)).first)
        let receipt = try WireJSON.decode(NostrEvent.self, from: received.event)
        #expect(receipt.kind == 9735)
        #expect(receipt.pubkey == advertised)
        #expect(receipt.isValid)
        let description = try #require(receipt.tags(named: "description").first?.first)
        #expect(description == request)
        let bolt11 = try #require(receipt.tags(named: "bolt11").first?.first)
        #expect(bolt11 == pr)
        #expect(try Bolt11Invoice.decode(bolt11).invoice.descriptionHash == Array(SHA256.hash(data: Data(description.utf8))))
        // Reported by the verify answer and by the phone: published once. The phone has reported
        // once it has handled the verify push; then the server has written the one delivery and
        // holds nothing more to send.
        var phoneReported = false
        while !phoneReported, let line = await phone.nextLine(within: .seconds(30)) {
            let handled = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            phoneReported = (handled?["replies"] as? [[String: Any]] ?? []).contains {
                ($0["url"] as? String)?.contains("/zap/") == true && $0["outcome"] as? String == "accepted"
            }
        }
        #expect(phoneReported, "the phone did not report the zap")
        #expect(
            try await eventually {
                let metrics = try await Self.http("GET", "\(base)/metrics").body
                return Self.metric(#"herald_pushes_sent_total{provider="nostr",outcome="delivered""#, in: metrics) == 1
                    && Self.metric("herald_outbox_in_memory ", in: metrics) == 0
            })
        #expect(await relay.events.count == 1)

        // A LUD-12 comment reaches the wallet as the payer wrote it, spaces and plus alike.
        let comment = "thanks a lot +1"
        let paid = try await Self.http("GET", "\(base)/lnurlp/alice/callback?amount=5000&comment=\(encoding.encode(comment))")
        #expect(paid.status == 200, "\(paid.body)")
        let invoices = try await ProgramRun.output(
            try HeraldServeProcess.binary("herald-device"), ["wallet", "invoices", "--wallet", phoneFolder.path])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(invoices.output.utf8)) as? [[String: Any]], "\(invoices.output)")
        #expect(listed.contains { $0["payerNote"] as? String == comment || $0["payer_note"] as? String == comment }, "\(invoices.output)")
    }

    /// The value of the first Prometheus sample whose line starts with `prefix`.
    static func metric(_ prefix: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix) }?.split(separator: " ").last.flatMap { Double($0) }
    }

    static func http(_ method: String, _ url: String, json: String? = nil, bearer: String? = nil) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}
