import Crypto
import Foundation
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldSecp256k1
import HeraldWire
import Testing

@testable import HeraldDevice

@Suite("The development wallet keeps real state in its folder")
struct DevelopmentWalletTests {
    static func wallet(in folder: URL, limits: ReceiveLimits? = nil) throws -> DevelopmentWallet {
        let issuer = try Bolt11InvoiceIssuer(folder: folder)
        guard let limits else { return DevelopmentWallet(folder: folder, issuer: issuer) }
        return DevelopmentWallet(folder: folder, issuer: issuer, limits: limits)
    }

    @Test("invoices, amounts, preimages and settled flags persist across instances")
    func persists() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let wallet = try Self.wallet(in: folder)
        try await wallet.connect()
        let invoice = try await wallet.receive(ReceiveRequest(amountMsat: 21_000, description: "[]", descriptionHash: true))
        #expect(invoice.bolt11.hasPrefix("lnbcrt210n1"))
        #expect(try await wallet.payment(hash: invoice.paymentHash)?.isSettled == false)
        #expect(try await wallet.payment(hash: invoice.paymentHash)?.preimage == nil)

        let other = try Self.wallet(in: folder)
        #expect(try await other.settle(paymentHash: invoice.paymentHash))
        try await wallet.sync()
        let payment = try #require(try await wallet.payment(hash: invoice.paymentHash))
        #expect(payment.isSettled && payment.amountMsat == 21_000 && payment.invoice == invoice.bolt11)
        // The preimage released on settlement is the one the payment hash commits to.
        let preimage = try #require(payment.preimage.flatMap { TestHex.bytes($0) })
        #expect(preimage.count == 32)
        #expect(TestHex.string(SHA256.hash(data: preimage)) == invoice.paymentHash)
        #expect(try await other.settle(paymentHash: "unknown") == false)
        // The state holds the preimages: owner-only, every file the wallet keeps there.
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(file).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
    }

    @Test("an invoice is BOLT11 signed by the node key kept in the wallet's folder, committing to what was asked")
    func realInvoice() async throws {
        let folder = try Fixtures.temporaryDirectory()
        let wallet = try Self.wallet(in: folder)
        let metadata = #"[["text/plain","Pay alice"],["text/identifier","alice@herald.example"]]"#
        let before = UInt64(Date().timeIntervalSince1970)
        let received = try await wallet.receive(ReceiveRequest(amountMsat: 123_456, description: metadata, descriptionHash: true))
        let (invoice, payee) = try Bolt11Invoice.decode(received.bolt11)

        // The key is in the folder: a second issuer there (another process) signs as the same node.
        let keyText = try String(contentsOf: folder.appendingPathComponent(NodeKeyFile.fileName), encoding: .utf8)
        let key = try #require(NodeSecretKey(hex: keyText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(payee == key.nodeID)
        #expect(try Bolt11InvoiceIssuer(folder: folder).nodeID == payee)

        #expect(invoice.network == .regtest && invoice.amountMsat == 123_456)
        #expect(invoice.timestamp >= before && invoice.timestamp <= UInt64(Date().timeIntervalSince1970))
        let paymentHash = try #require(TestHex.bytes(received.paymentHash))
        #expect(invoice.fields.contains(.paymentHash(paymentHash)))
        #expect(invoice.fields.contains(.descriptionHash(Array(SHA256.hash(data: Array(metadata.utf8))))))
        #expect(invoice.fields.contains(.expiry(3600)) && invoice.fields.contains(.minFinalCLTVExpiryDelta(18)))
        #expect(invoice.fields.contains(.features([8, 14])))
        let secrets = invoice.fields.compactMap { if case .paymentSecret(let secret) = $0 { secret } else { nil } }
        #expect(secrets.count == 1 && secrets.first?.count == 32)

        // Without a description hash, the description itself is carried; each invoice has its own hash.
        let plain = try await wallet.receive(ReceiveRequest(amountMsat: 5_000_000, description: "coffee", descriptionHash: false))
        let decoded = try Bolt11Invoice.decode(plain.bolt11)
        #expect(plain.bolt11.hasPrefix("lnbcrt50u1") && decoded.invoice.fields.contains(.description("coffee")))
        #expect(decoded.payee == payee && plain.paymentHash != received.paymentHash)
    }

    @Test("amounts outside the limits are refused with a payer-readable reason")
    func limits() async throws {
        let wallet = try Self.wallet(in: try Fixtures.temporaryDirectory(), limits: ReceiveLimits(minMsat: 1_000, maxMsat: 10_000))
        await #expect(throws: WalletError.self) {
            try await wallet.receive(ReceiveRequest(amountMsat: 20_000, description: "", descriptionHash: false))
        }
    }
}

/// Hex both ways, for comparing hashes in these tests.
enum TestHex {
    static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    static func string(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
