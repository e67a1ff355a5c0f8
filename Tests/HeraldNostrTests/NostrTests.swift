import Foundation
import HeraldBech32
import HeraldNostr
import HeraldWire
import Testing

@Suite("BIP-340 and NIP-01")
struct NostrPrimitiveTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var index: Int
        var secretKey: String
        var publicKey: String
        var auxRand: String
        var message: String
        var signature: String
        var valid: Bool
        var comment: String
        var testDescription: String { "vector \(index)\(comment.isEmpty ? "" : ": \(comment)")" }
    }

    /// BIP-340's published `test-vectors.csv`, as the bips repository has it.
    static let vectors: [Vector] = {
        guard let url = Bundle.module.url(forResource: "bip340-test-vectors", withExtension: "csv"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: ",", maxSplits: 7, omittingEmptySubsequences: false).map(String.init)
            return Vector(
                index: Int(fields[0]) ?? -1, secretKey: fields[1], publicKey: fields[2], auxRand: fields[3], message: fields[4],
                signature: fields[5], valid: fields[6] == "TRUE", comment: fields.count > 7 ? fields[7] : "")
        }
    }()

    @Test("the vectors are all there")
    func loaded() { #expect(Self.vectors.count == 15) }

    @Test("verification gives the published result", arguments: vectors)
    func verify(_ vector: Vector) throws {
        let result = Schnorr.verify(
            signature: try #require([UInt8](hex: vector.signature)), message: try #require([UInt8](hex: vector.message)),
            publicKey: try #require([UInt8](hex: vector.publicKey)))
        #expect(result == vector.valid)
    }

    @Test(
        "signing with the published key and aux_rand gives the published signature and public key",
        arguments: vectors.filter { !$0.secretKey.isEmpty })
    func sign(_ vector: Vector) throws {
        let key = try NostrSecretKey(text: vector.secretKey)
        #expect(key.publicKeyHex == vector.publicKey.lowercased())
        let signature = key.sign(try #require([UInt8](hex: vector.message)), auxRand: try #require([UInt8](hex: vector.auxRand)))
        #expect(signature.lowercaseHex == vector.signature.lowercased())
    }

    @Test("a key reads as hex or nsec; garbage and zero are refused")
    func keyText() throws {
        let (key, hex) = NostrSecretKey.generate()
        let nsec = Bech32.encode(hrp: "nsec", data: Bech32.regroup(try #require([UInt8](hex: hex)), from: 8, to: 5, pad: true))
        #expect(try NostrSecretKey(text: " \(nsec)\n").publicKeyHex == key.publicKeyHex)
        #expect(try NostrSecretKey(text: hex.uppercased()).publicKeyHex == key.publicKeyHex)
        for bad in ["", "abc", String(repeating: "0", count: 64), "nsec1qqqq", String(repeating: "f", count: 64)] {
            #expect(throws: NostrSecretKey.Invalid.self) { try NostrSecretKey(text: bad) }
        }
    }

    /// The zap request inside NIP-57's example receipt (Appendix E), a real signed event.
    static let nip57Request =
        #"{"pubkey":"97c70a44366a6535c145b333f973ea86dfdc2d7a99da618c40c64705ad98e322","content":"","id":"d9cc14d50fcb8c27539aacf776882942c1a11ea4472f8cdec1dea82fab66279d","created_at":1674164539,"sig":"77127f636577e9029276be060332ea565deaf89ff215a494ccff16ae3f757065e2bc59b2e8c113dd407917a010b3abd36c8d7ad84c0e3ab7dab3a0b0caa9835d","kind":9734,"tags":[["e","3624762a1274dd9636e0c552b53086d70bc88c165bc4dc0f9e836a1eaf86c3b8"],["p","32e1827635450ebb3c5a7d12c1f8e7b2b514439ac10a67eef3d9fd9c5c68e245"],["relays","wss://relay.damus.io","wss://nostr-relay.wlvs.space","wss://nostr.fmt.wiz.biz","wss://relay.nostr.bg","wss://nostr.oxtr.dev","wss://nostr.v0l.io","wss://brb.io","wss://nostr.bitcoiner.social","ws://monad.jb55.com:8080","wss://relay.snort.social"]]}"#

    @Test("the id of NIP-57's example zap request is its NIP-01 hash, as computed independently")
    func exampleID() throws {
        let event = try WireJSON.decode(NostrEvent.self, from: Data(Self.nip57Request.utf8))
        // NIP-57's examples were edited after signing: their ids do not match their contents.
        // This is the hash Python's json.dumps([0, pubkey, created_at, kind, tags, content],
        // separators=(",", ":"), ensure_ascii=False) gives, as NIP-01 defines it.
        #expect(event.computedID.lowercaseHex == "034e151dc827fd9feee508bdda46d21f601b0be443f4d80a03080f88152b8d11")
        #expect(!event.isValid)
    }

    @Test("a signed event verifies; changing any field breaks it")
    func signedEvent() {
        let key = NostrSecretKey.generate().key
        let event = NostrEvent.signed(kind: 1, tags: [["t", "zap"]], content: "hello", createdAt: 1_764_000_000, by: key)
        #expect(event.isValid)
        var content = event
        content.content = "hellp"
        var tags = event
        tags.tags = [["t", "zaps"]]
        var time = event
        time.createdAt += 1
        var author = event
        author.pubkey = NostrSecretKey.generate().key.publicKeyHex
        for changed in [content, tags, time, author] { #expect(!changed.isValid) }
    }

    @Test("NIP-01 escapes exactly \\n \" \\\\ \\r \\t \\b \\f and nothing else")
    func serialization() {
        let event = NostrEvent(id: "", pubkey: "ab", createdAt: 1, kind: 1, tags: [["t", "é/<>"]], content: "a\n\"\\\r\t\u{8}\u{C}/é☃", sig: "")
        #expect(String(decoding: event.serializedForID, as: UTF8.self) == #"[0,"ab",1,1,[["t","é/<>"]],"a\n\"\\\r\t\b\f/é☃"]"#)
    }
}
