import HeraldSecp256k1
import Testing

@Suite("Lightning message signatures (LND signmessage)")
struct LightningMessageSignatureTests {
    /// The secret key 1, whose node id is the generator point.
    static let one = NodeSecretKey(hex: String(repeating: "0", count: 63) + "1")!
    static let generator = NodeID(hex: "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")!

    /// Signatures made by other implementations' nodes (the corpus Core Lightning and LDK test
    /// their compatibility with LND against): message, signature, node id.
    static let foreign: [(String, String, String)] = [
        (
            "is this compatible?",
            "rbgfioj114mh48d8egqx8o9qxqw4fmhe8jbeeabdioxnjk8z3t1ma1hu1fiswpakgucwwzwo6ofycffbsqusqdimugbh41n1g698hr9t",
            "02b80cabdf82638aac86948e4c06e82064f547768dcef977677b9ea931ea75bab5"
        ),
        (
            "hi",
            "rnrphcjswusbacjnmmmrynh9pqip7sy5cx695h6mfu64iac6qmcmsd8xnsyczwmpqp9shqkth3h4jmkgyqu5z47jfn1q7gpxtaqpx4xg",
            "02de60d194e1ca5947b59fe8e2efd6aadeabfb67f2e89e13ae1a799c1e08e4a43b"
        ),
        (
            "hi",
            "ry8bbsopmduhxy3dr5d9ekfeabdpimfx95kagdem7914wtca79jwamtbw4rxh69hg7n6x9ty8cqk33knbxaqftgxsfsaeprxkn1k48p3",
            "022b8ece90ee891cbcdac0c1cc6af46b73c47212d8defbce80265ac81a6b794931"
        ),
    ]

    @Test("signing is deterministic and matches LDK's signature of \"test message\" with key 1")
    func knownSignature() {
        #expect(Self.one.nodeID == Self.generator)
        let signature = LightningMessageSignature.sign("test message", with: Self.one)
        #expect(
            signature
                == "d9tibmnic9t5y41hg7hkakdcra94akas9ku3rmmj4ag9mritc8ok4p5qzefs78c9pqfhpuftqqzhydbdwfg7u6w6wdxcqpqn4sj4e73e"
        )
        #expect(LightningMessageSignature.recoverNodeID("test message", signature: signature) == Self.generator)
    }

    @Test("signatures made by LND and Core Lightning nodes verify", arguments: foreign)
    func foreignSignatures(_ message: String, _ signature: String, _ nodeHex: String) throws {
        let nodeID = try #require(NodeID(hex: nodeHex))
        #expect(LightningMessageSignature.recoverNodeID(message, signature: signature) == nodeID)
        #expect(LightningMessageSignature.verify(message, signature: signature, nodeID: nodeID))
        #expect(!LightningMessageSignature.verify(message + " ", signature: signature, nodeID: nodeID))
    }

    @Test("sign, recover and verify round-trip with fresh keys")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 31, 32, 33, 200] {
            let keyBytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let key = try #require(NodeSecretKey(bytes: keyBytes))
            let message = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let signature = LightningMessageSignature.sign(message, with: key)
            #expect(signature.count == 104)
            #expect(LightningMessageSignature.recoverNodeID(message, signature: signature) == key.nodeID)
            #expect(LightningMessageSignature.verify(message, signature: signature, nodeID: key.nodeID))
        }
    }

    @Test("a changed message, a changed signature character or another key fails")
    func tampering() throws {
        let key = try #require(NodeSecretKey(hex: String(repeating: "42", count: 32)))
        let message = "pay me"
        let signature = LightningMessageSignature.sign(message, with: key)
        #expect(LightningMessageSignature.verify(message, signature: signature, nodeID: key.nodeID))

        #expect(!LightningMessageSignature.verify("pay me!", signature: signature, nodeID: key.nodeID))
        #expect(!LightningMessageSignature.verify(message, signature: signature, nodeID: Self.generator))

        // Every position, one character changed: never the same signer.
        for offset in 0..<signature.count {
            var characters = Array(signature)
            characters[offset] = characters[offset] == "y" ? "b" : "y"
            let tampered = String(characters)
            #expect(!LightningMessageSignature.verify(message, signature: tampered, nodeID: key.nodeID))
        }
        #expect(LightningMessageSignature.recoverNodeID(message, signature: String(signature.dropLast())) == nil)
        #expect(LightningMessageSignature.recoverNodeID(message, signature: signature + "yy") == nil)
        #expect(LightningMessageSignature.recoverNodeID(message, signature: "") == nil)
    }

    @Test("a recovery byte outside 31...34 is refused")
    func recoveryByte() throws {
        let signature = LightningMessageSignature.sign("x", with: Self.one)
        var bytes = try #require(ZBase32.decode(signature))
        for header: UInt8 in [0, 27, 30, 35, 255] {
            bytes[0] = header
            #expect(LightningMessageSignature.recoverNodeID("x", signature: ZBase32.encode(bytes)) == nil)
        }
    }

    @Test("keys and node ids are validated")
    func keys() {
        #expect(NodeSecretKey(hex: String(repeating: "0", count: 64)) == nil)
        #expect(NodeSecretKey(hex: String(repeating: "f", count: 64)) == nil)  // above the curve order
        #expect(NodeSecretKey(hex: "01") == nil)
        #expect(NodeID(hex: "04" + String(Self.generator.hex.dropFirst(2))) == nil)
        #expect(NodeID(hex: "02" + String(repeating: "0", count: 64)) == nil)  // x = 0 is not on the curve
        #expect(NodeID(hex: Self.generator.hex.uppercased()) == Self.generator)
        #expect("\(Self.one)" == "NodeSecretKey(\(Self.generator.hex))")
    }
}
