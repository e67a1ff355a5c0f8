import Crypto
import HeraldBech32
import HeraldBolt11
import HeraldSecp256k1
import Testing

/// BOLT11's own examples: the spec gives the key, timestamp and every field, so writing the same
/// fields must give the documented string character for character (signatures are RFC 6979),
/// and reading the documented string must give the same fields back.
@Suite("BOLT11: the specification's example invoices")
struct Bolt11VectorTests {
    static let key = NodeSecretKey(hex: "e126f68f7eafcc8b74f54d269fe206be715000f94dac067d1c04a8ca3b2db734")!
    static let payee = NodeID(hex: "03e7156ae33b0a208d0744199163177e909e80176e55d97a2f221ede0f934dd9ad")!
    static let timestamp: UInt64 = 1_496_314_658
    static let hash = bytes("0001020304050607080900010203040506070809000102030405060708090102")
    static let secret = [UInt8](repeating: 0x11, count: 32)
    static let features: Bolt11Field = .features([8, 14])

    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let invoice: Bolt11Invoice
        var testDescription: String { name }
    }

    static let examples: [Example] = [
        Example(
            name: "donation of any amount",
            text:
                "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: nil, timestamp: timestamp,
                fields: [.paymentSecret(secret), .paymentHash(hash), .description("Please consider supporting this project"), features]
            )
        ),
        Example(
            name: "2500u, expiry 60 s",
            text:
                "lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: 250_000_000, timestamp: timestamp,
                fields: [.paymentSecret(secret), .paymentHash(hash), .description("1 cup coffee"), .expiry(60), features]
            )
        ),
        Example(
            name: "UTF-8 description",
            text:
                "lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpquwpc4curk03c9wlrswe78q4eyqc7d8d0xqzpu9qrsgqhtjpauu9ur7fw2thcl4y9vfvh4m9wlfyz2gem29g5ghe2aak2pm3ps8fdhtceqsaagty2vph7utlgj48u0ged6a337aewvraedendscp573dxr",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: 250_000_000, timestamp: timestamp,
                fields: [.paymentSecret(secret), .paymentHash(hash), .description("ナンセンス 1杯"), .expiry(60), features]
            )
        ),
        Example(
            name: "20m with a description hash",
            text:
                "lnbc20m1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klysy043l2ahrqs9qrsgq7ea976txfraylvgzuxs8kgcw23ezlrszfnh8r6qtfpr6cxga50aj6txm9rxrydzd06dfeawfk6swupvz4erwnyutnjq7x39ymw6j38gp7ynn44",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: 2_000_000_000, timestamp: timestamp,
                fields: [
                    .paymentSecret(secret), .paymentHash(hash),
                    .descriptionHash(Array(SHA256.hash(data: Array(cakeList.utf8)))), features,
                ]
            )
        ),
        Example(
            name: "pico-bitcoin amount, final CLTV delta and a route hint",
            text:
                "lnbc9678785340p1pwmna7lpp5gc3xfm08u9qy06djf8dfflhugl6p7lgza6dsjxq454gxhj9t7a0sd8dgfkx7cmtwd68yetpd5s9xar0wfjn5gpc8qhrsdfq24f5ggrxdaezqsnvda3kkum5wfjkzmfqf3jkgem9wgsyuctwdus9xgrcyqcjcgpzgfskx6eqf9hzqnteypzxz7fzypfhg6trddjhygrcyqezcgpzfysywmm5ypxxjemgw3hxjmn8yptk7untd9hxwg3q2d6xjcmtv4ezq7pqxgsxzmnyyqcjqmt0wfjjq6t5v4khxsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygsxqyjw5qcqp2rzjq0gxwkzc8w6323m55m4jyxcjwmy7stt9hwkwe2qxmy8zpsgg7jcuwz87fcqqeuqqqyqqqqlgqqqqn3qq9q9qrsgqrvgkpnmps664wgkp43l22qsgdw4ve24aca4nymnxddlnp8vh9v2sdxlu5ywdxefsfvm0fq3sesf08uf6q9a2ke0hc9j6z6wlxg5z5kqpu2v9wz",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: 967_878_534, timestamp: 1_572_468_703,
                fields: [
                    .paymentHash(bytes("462264ede7e14047e9b249da94fefc47f41f7d02ee9b091815a5506bc8abf75f")),
                    .description(
                        #"Blockstream Store: 88.85 USD for Blockstream Ledger Nano S x 1, "Back In My Day" Sticker x 2, "I Got Lightning Working" Sticker x 2 and 1 more items"#
                    ),
                    .paymentSecret(secret), .expiry(604_800), .minFinalCLTVExpiryDelta(10),
                    .other(type: 3, data: Bech32.regroup(routeHint, from: 8, to: 5, pad: true)), features,
                ]
            )
        ),
        Example(
            name: "feature 99 (a longer feature vector)",
            text:
                "lnbc25m1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5vdhkven9v5sxyetpdeessp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygs9q5sqqqqqqqqqqqqqqqqsgq2a25dxl5hrntdtn6zvydt7d66hyzsyhqs4wdynavys42xgl6sgx9c4g7me86a27t07mdtfry458rtjr0v92cnmswpsjscgt2vcse3sgpz3uapa",
            invoice: Bolt11Invoice(
                network: .bitcoin, amountMsat: 2_500_000_000, timestamp: timestamp,
                fields: [.paymentHash(hash), .description("coffee beans"), .paymentSecret(secret), .features([8, 14, 99])]
            )
        ),
    ]

    static let cakeList =
        "One piece of chocolate cake, one icecream cone, one pickle, one slice of swiss cheese, one slice of salami, one lollypop, one piece of cherry pie, one sausage, one cupcake, and one slice of watermelon"

    /// The pico example's route hint: node 03d06758…, channel 589390x3312x1, fees 1000 msat +
    /// 2500 ppm, CLTV delta 40.
    static let routeHint: [UInt8] = {
        let node = bytes("03d06758583bb5154774a6eb221b1276c9e82d65bbaceca806d90e20c108f4b1c7")
        let channel = UInt64(589_390) << 40 | UInt64(3312) << 16 | 1
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        return node + bigEndian(channel) + bigEndian(UInt32(1000)) + bigEndian(UInt32(2500)) + bigEndian(UInt16(40))
    }()

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    @Test("the example key is the documented payee")
    func payee() {
        #expect(Self.key.nodeID == Self.payee)
    }

    @Test("writing the documented fields with the documented key gives the documented invoice", arguments: examples)
    func encodes(_ example: Example) throws {
        #expect(try example.invoice.signed(with: Self.key) == example.text)
    }

    @Test("reading the documented invoice gives its fields and recovers the documented payee", arguments: examples)
    func decodes(_ example: Example) throws {
        let (invoice, payee) = try Bolt11Invoice.decode(example.text)
        #expect(invoice == example.invoice)
        #expect(payee == Self.payee)
        // Upper case, as in QR codes, reads the same.
        #expect(try Bolt11Invoice.decode(example.text.uppercased()).invoice == example.invoice)
    }
}
