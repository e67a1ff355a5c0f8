import Crypto
import Foundation
import HeraldBech32
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice
import HeraldSecp256k1
import Testing

@Suite("BOLT11: our own invoices read back, signatures bind the content")
struct Bolt11RoundTripTests {
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    @Test("fresh keys, every network and assorted amounts round-trip and recover the signer", arguments: Bolt11Network.allCases)
    func roundTrip(_ network: Bolt11Network) throws {
        for amount in [nil, 1, 999, 1_000, 123_456_789, 100_000_000_000] as [UInt64?] {
            let key = NodeSecretKey.random()
            let invoice = Bolt11Invoice(
                network: network, amountMsat: amount, timestamp: UInt64(Date().timeIntervalSince1970),
                fields: [
                    .paymentSecret(Self.randomBytes(32)), .paymentHash(Self.randomBytes(32)),
                    .descriptionHash(Self.randomBytes(32)), .expiry(86_400), .minFinalCLTVExpiryDelta(144),
                    .features([8, 14, 17]), .payee(key.nodeID),
                ]
            )
            let text = try invoice.signed(with: key)
            #expect(text.hasPrefix("ln" + network.rawValue))
            let (decoded, payee) = try Bolt11Invoice.decode(text)
            #expect(decoded == invoice && payee == key.nodeID)
        }
    }

    @Test("the signature covers the human-readable part: another amount with a fresh checksum recovers another node")
    func signatureCoversAmount() throws {
        let key = NodeSecretKey.random()
        let invoice = Bolt11Invoice(
            network: .regtest, amountMsat: 21_000, timestamp: 1_700_000_000,
            fields: [.paymentSecret(Self.randomBytes(32)), .paymentHash(Self.randomBytes(32)), .description("x")]
        )
        let (_, data) = try Bech32.decode(try invoice.signed(with: key))
        // Same data and signature under `lnbcrt220n`: the checksum is valid, the payee is not the signer.
        let forged = Bech32.encode(hrp: "lnbcrt220n", data: data)
        let (read, payee) = try Bolt11Invoice.decode(forged)
        #expect(read.amountMsat == 22_000 && payee != key.nodeID)
        // And naming the real payee in `n` makes the reader refuse it outright.
        var named = invoice
        named.fields.append(.payee(key.nodeID))
        let (_, namedData) = try Bech32.decode(try named.signed(with: key))
        #expect(throws: Bolt11Error.badSignature) { try Bolt11Invoice.decode(Bech32.encode(hrp: "lnbcrt220n", data: namedData)) }
    }

    @Test("what cannot be written is refused, not written wrong")
    func refusals() {
        let key = NodeSecretKey.random()
        #expect(throws: Bolt11Error.zeroAmount) {
            try Bolt11Invoice(network: .regtest, amountMsat: 0, timestamp: 0, fields: []).signed(with: key)
        }
        #expect(throws: Bolt11Error.timestampOutOfRange) {
            try Bolt11Invoice(network: .regtest, amountMsat: 1, timestamp: 1 << 35, fields: []).signed(with: key)
        }
        // 640 bytes of description need 1024 groups; 639 still fit.
        #expect(throws: Bolt11Error.fieldTooLong(type: 13)) {
            try Bolt11Invoice(network: .regtest, amountMsat: 1, timestamp: 0, fields: [.description(String(repeating: "a", count: 640))])
                .signed(with: key)
        }
        #expect(throws: Never.self) {
            try Bolt11Invoice(network: .regtest, amountMsat: 1, timestamp: 0, fields: [.description(String(repeating: "a", count: 639))])
                .signed(with: key)
        }
    }

    @Test("readers refuse unknown prefixes, bad amounts and fixed-length fields of the wrong length")
    func readerRefusals() throws {
        let key = NodeSecretKey.random()
        let good = try Bolt11Invoice(network: .regtest, amountMsat: 1_000, timestamp: 0, fields: []).signed(with: key)
        let (_, data) = try Bech32.decode(good)
        #expect(throws: Bolt11Error.unknownPrefix) { try Bolt11Invoice.decode(Bech32.encode(hrp: "lnxy10n", data: data)) }
        #expect(throws: Bolt11Error.unknownPrefix) { try Bolt11Invoice.decode(Bech32.encode(hrp: "bcrt10n", data: data)) }
        #expect(throws: Bolt11Error.badAmount) { try Bolt11Invoice.decode(Bech32.encode(hrp: "lnbcrt1p", data: data)) }
        #expect(throws: Bolt11Error.tooShort) { try Bolt11Invoice.decode(Bech32.encode(hrp: "lnbcrt10n", data: Array(data.prefix(100)))) }
        // A `p` field of 51 groups: timestamp, then type 1, length 51.
        let shortHash = Array(data.prefix(7)) + [1, 1, 19] + [UInt8](repeating: 0, count: 51) + Array(data.suffix(104))
        #expect(throws: Bolt11Error.badField(type: 1)) { try Bolt11Invoice.decode(Bech32.encode(hrp: "lnbcrt10n", data: shortHash)) }
    }

    @Test("concurrent first uses of a wallet folder agree on one node key, kept owner-only")
    func nodeKeyFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bolt11-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let ids = try await withThrowingTaskGroup(of: NodeID.self) { group in
            for _ in 0..<8 { group.addTask { try Bolt11InvoiceIssuer(folder: folder).nodeID } }
            return try await group.reduce(into: Set<NodeID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        let path = folder.appendingPathComponent(NodeKeyFile.fileName).path
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        // Only the key file is left: no temporary files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [NodeKeyFile.fileName])
        // A damaged key file is an error that names it, never a silently new identity.
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: NodeKeyFile.Unreadable.self) { try Bolt11InvoiceIssuer(folder: folder) }
    }

    @Test("the issuer writes what the wallet's terms say, with the LNURL metadata's SHA-256 as description hash")
    func issuerTerms() throws {
        let key = NodeSecretKey.random()
        let hash = Self.randomBytes(32)
        let metadata = #"[["text/plain","hi"]]"#
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        let text = try Bolt11InvoiceIssuer(key: key).invoice(
            for: InvoiceTerms(
                amountMsat: 1_234_567, paymentHash: hash, description: metadata, descriptionHash: true, createdAt: created,
                expirySeconds: 600
            )
        )
        #expect(text.hasPrefix("lnbcrt12345670p1"))
        let (invoice, payee) = try Bolt11Invoice.decode(text)
        #expect(payee == key.nodeID && invoice.timestamp == 1_800_000_000 && invoice.amountMsat == 1_234_567)
        #expect(invoice.fields.first.map { if case .paymentSecret = $0 { true } else { false } } == true)
        #expect(
            Array(invoice.fields.dropFirst()) == [
                .paymentHash(hash), .descriptionHash(Array(SHA256.hash(data: Array(metadata.utf8)))), .expiry(600),
                .minFinalCLTVExpiryDelta(18), .features([8, 14]),
            ]
        )
        #expect(invoice.paymentHash == hash)
        #expect(invoice.descriptionHash == Array(SHA256.hash(data: Array(metadata.utf8))))
        let plain = Bolt11Invoice(network: .regtest, amountMsat: nil, timestamp: 1, fields: [.description("x")])
        #expect(plain.paymentHash == nil && plain.descriptionHash == nil)
    }
}
