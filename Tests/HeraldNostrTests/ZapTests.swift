import Foundation
import HeraldNostr
import HeraldWire
import Testing

@Suite("NIP-57 zap requests and receipts")
struct ZapTests {
    static let payURL = "https://your.domain/.well-known/lnurlp/alice"
    static let payer = NostrSecretKey.generate().key
    static let recipient = String(repeating: "32", count: 32)

    static func request(
        kind: Int = 9734, tags: [[String]]? = nil, amount: String? = "21000", lnurl: String? = LNURL.encode(payURL),
        extra: [[String]] = [], key: NostrSecretKey = payer
    ) -> String {
        var tags = tags ?? [["relays", "wss://relay.example.com", "wss://nos.example.org"], ["p", recipient]]
        if let amount { tags.append(["amount", amount]) }
        if let lnurl { tags.append(["lnurl", lnurl]) }
        tags += extra
        return NostrEvent.signed(kind: kind, tags: tags, content: "Zap!", createdAt: 1_764_000_000, by: key).json
    }

    @Test("a well-formed request passes and keeps the JSON exactly as received")
    func accepted() throws {
        let json = Self.request(extra: [["e", String(repeating: "ab", count: 32)], ["P", Self.payer.publicKeyHex]])
        let request = try ZapRequest(json: json, amount: 21_000, payURL: Self.payURL)
        #expect(request.json == json)
        #expect(request.recipient == Self.recipient)
        #expect(request.relays == ["wss://relay.example.com", "wss://nos.example.org"])
        #expect(request.amount == 21_000)
        #expect(request.eventID == String(repeating: "ab", count: 32))
        #expect(request.descriptionHash.count == 32)
    }

    @Test(
        "each rule of NIP-57 Appendix D is refused, naming it",
        arguments: [
            ("kind", request(kind: 1)),
            ("tags", request(tags: [], amount: nil, lnurl: nil)),
            ("p", request(tags: [["relays", "wss://r.example"]])),
            ("p", request(extra: [["p", String(repeating: "11", count: 32)]])),
            ("p", request(tags: [["relays", "wss://r.example"], ["p", "npub-not-hex"]])),
            ("e", request(extra: [["e", String(repeating: "ab", count: 32)], ["e", String(repeating: "cd", count: 32)]])),
            ("e", request(extra: [["e", "short"]])),
            ("P", request(extra: [["P", String(repeating: "ab", count: 32)], ["P", String(repeating: "cd", count: 32)]])),
            ("a", request(extra: [["a", "not a coordinate"]])),
            ("relays", request(tags: [["p", recipient]])),
            ("relays", request(tags: [["relays", "https://relay.example.com"], ["p", recipient]])),
            ("relays", request(tags: [["relays"] + (0..<11).map { "wss://r\($0).example" }, ["p", recipient]])),
            ("amount", request(amount: "21001")),
            ("amount", request(amount: "lots")),
            ("lnurl", request(lnurl: LNURL.encode("https://elsewhere.example/.well-known/lnurlp/alice"))),
            ("json", "{\"kind\":9734}"),
        ])
    func refused(rule: String, json: String) {
        #expect {
            try ZapRequest(json: json, amount: 21_000, payURL: Self.payURL)
        } throws: { error in
            (error as? ZapRequest.Invalid)?.rule == rule
        }
    }

    @Test("a forged signature and a changed id are refused as signature")
    func signature() throws {
        var event = try WireJSON.decode(NostrEvent.self, from: Data(Self.request().utf8))
        event.content = "More!"
        #expect(throws: ZapRequest.Invalid(rule: "signature", message: "the id or the BIP-340 signature does not verify")) {
            try ZapRequest(json: event.json, amount: 21_000, payURL: Self.payURL)
        }
    }

    @Test("the receipt: kind 9735 by Herald's key, p, e, P, bolt11, description and preimage, created at the payment")
    func receipt() throws {
        let herald = NostrSecretKey.generate().key
        let request = try ZapRequest(
            json: Self.request(extra: [["e", String(repeating: "ab", count: 32)]]), amount: 21_000, payURL: Self.payURL)
        let paidAt = Date(timeIntervalSince1970: 1_764_000_123.9)
        let receipt = ZapReceipt.make(for: request, bolt11: "lnbc210n1x", preimage: String(repeating: "5d", count: 32), paidAt: paidAt, key: herald)
        #expect(receipt.kind == 9735)
        #expect(receipt.pubkey == herald.publicKeyHex)
        #expect(receipt.createdAt == 1_764_000_123)
        #expect(receipt.content == "")
        #expect(receipt.isValid)
        #expect(
            receipt.tags == [
                ["p", Self.recipient], ["e", String(repeating: "ab", count: 32)], ["P", Self.payer.publicKeyHex],
                ["bolt11", "lnbc210n1x"], ["description", request.json], ["preimage", String(repeating: "5d", count: 32)],
            ])
    }

    @Test("LNURL: bech32 of the URL, read back in either case")
    func lnurl() {
        let encoded = LNURL.encode(Self.payURL)
        #expect(encoded.hasPrefix("lnurl1"))
        #expect(LNURL.decode(encoded.uppercased()) == Self.payURL)
        #expect(LNURL.decode("lnbc1xyz") == nil)
    }
}
