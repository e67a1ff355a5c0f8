import Foundation
import HeraldWire
import Testing

@Suite("LNURL-pay and BOLT12 reply bodies")
struct LnurlPayWireTests {
    @Test("payRequest info encodes with the LUD-06 keys, tag and commentAllowed")
    func infoEncodes() throws {
        let metadata = LnurlPayMetadata(description: "Pay to alice", identifier: "alice@herald.example").jsonString
        let info = LnurlPayInfo(
            callback: "https://herald.example/lnurlp/alice/callback", minSendable: 1000, maxSendable: 4_000_000_000, metadata: metadata,
            commentAllowed: 255
        )
        let json = try WireJSON.encodeString(info)
        #expect(
            json
                == #"{"callback":"https://herald.example/lnurlp/alice/callback","commentAllowed":255,"maxSendable":4000000000,"metadata":"[[\"text/plain\",\"Pay to alice\"],[\"text/identifier\",\"alice@herald.example\"]]","minSendable":1000,"tag":"payRequest"}"#
        )
        #expect(try WireJSON.decode(LnurlPayInfo.self, from: Data(json.utf8)) == info)
    }

    @Test("metadata is compact JSON with slashes unescaped, and parses back")
    func metadataString() throws {
        let metadata = LnurlPayMetadata(description: "Pay with LNURL", identifier: "bob@x.org")
        #expect(metadata.jsonString == #"[["text/plain","Pay with LNURL"],["text/identifier","bob@x.org"]]"#)
        let parsed = try #require(LnurlPayMetadata(jsonString: metadata.jsonString))
        #expect(parsed == metadata)
        #expect(parsed.identifier == "bob@x.org")
        #expect(LnurlPayMetadata(description: "no address").jsonString == #"[["text/plain","no address"]]"#)
        #expect(LnurlPayMetadata(jsonString: #"{"not":"pairs"}"#) == nil)
    }

    @Test("invoice answer is {pr, routes: [], verify}")
    func invoiceEncodes() throws {
        let verify = LnurlPayInvoice.verifyURL(template: "https://h.example/lnurlpay/alice/{payment_hash}", paymentHash: "abc123")
        #expect(verify == "https://h.example/lnurlpay/alice/abc123")
        let json = try WireJSON.encodeString(LnurlPayInvoice(pr: "lnbc1", verify: verify))
        #expect(json == #"{"pr":"lnbc1","routes":[],"verify":"https://h.example/lnurlpay/alice/abc123"}"#)
        #expect(try WireJSON.encodeString(LnurlPayInvoice(pr: "lnbc1")) == #"{"pr":"lnbc1","routes":[]}"#)
    }

    @Test("verify answer follows LUD-21, with a null preimage until settled")
    func verifyEncodes() throws {
        let settled = try WireJSON.encodeString(LnurlPayVerification(settled: true, preimage: "ff00", pr: "lnbc1"))
        #expect(settled == #"{"pr":"lnbc1","preimage":"ff00","settled":true,"status":"OK"}"#)
        let open = try WireJSON.encodeString(LnurlPayVerification(settled: false, preimage: "ff00", pr: "lnbc1"))
        #expect(open == #"{"pr":"lnbc1","preimage":null,"settled":false,"status":"OK"}"#)
        let decoded = try WireJSON.decode(LnurlPayVerification.self, from: Data(open.utf8))
        #expect(decoded.preimage == nil && decoded.settled == false)
    }

    @Test("errors are {status: ERROR, reason}")
    func errorEncodes() throws {
        #expect(try WireJSON.encodeString(LnurlError(reason: "Not found")) == #"{"reason":"Not found","status":"ERROR"}"#)
    }

    @Test("BOLT12 reply is {invoice} or {error}")
    func bolt12Reply() throws {
        #expect(try WireJSON.encodeString(Bolt12InvoiceReply.invoice("lni1")) == #"{"invoice":"lni1"}"#)
        #expect(try WireJSON.encodeString(Bolt12InvoiceReply.error("Amount missing")) == #"{"error":"Amount missing"}"#)
        #expect(try WireJSON.decode(Bolt12InvoiceReply.self, from: Data(#"{"error":"x"}"#.utf8)) == .error("x"))
        #expect(throws: DecodingError.self) { try WireJSON.decode(Bolt12InvoiceReply.self, from: Data("{}".utf8)) }
    }

    @Test("cache lifetimes are the Breez plugin's: a day for info, a week for a settled verify")
    func cacheLifetimes() {
        #expect(ReplyCacheLifetime.payInfo == 86_400)
        #expect(ReplyCacheLifetime.settledVerification == 604_800)
        #expect(ReplyCacheLifetime.headerValue(maxAge: 86_400) == "max-age=86400")
        #expect(ReplyCacheLifetime.headerValue(maxAge: 0) == nil)
    }
}
