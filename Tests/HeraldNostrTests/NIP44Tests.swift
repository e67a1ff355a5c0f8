import Crypto
import Foundation
import HeraldNostr
import HeraldWire
import Testing

/// NIP-44 v2 against the official vectors: paulmillr/nip44 `nip44.vectors.json` (commit
/// 671a1f04, sha256 269ed0f6…5040, the hash NIP-44 names), copied unchanged.
struct NIP44Tests {
    static func vectors() throws -> [String: JSONValue] {
        let url = try #require(Bundle.module.url(forResource: "nip44.vectors", withExtension: "json"))
        let data = try Data(contentsOf: url)
        #expect(Array(SHA256.hash(data: data)).lowercaseHex == "269ed0f69e4c192512cc779e78c555090cebc7c785b609e338a62afc3ce25040")
        return try #require(try JSONParser.parse(data)["v2"]?.objectValue)
    }

    static func list(_ value: JSONValue?) -> [JSONValue] {
        if case .array(let items)? = value { return items }
        return []
    }

    struct Missing: Error { var key: String }

    static func text(_ vector: JSONValue, _ key: String) throws -> String {
        guard let text = vector[key]?.stringValue else { throw Missing(key: key) }
        return text
    }

    static func bytes(_ vector: JSONValue, _ key: String) throws -> [UInt8] {
        guard let bytes = [UInt8](hex: try text(vector, key)) else { throw Missing(key: key) }
        return bytes
    }

    static func secret(_ vector: JSONValue, _ key: String) throws -> NostrSecretKey {
        guard let secret = NostrSecretKey(bytes: try bytes(vector, key)) else { throw Missing(key: key) }
        return secret
    }

    static func key(_ vector: JSONValue) throws -> SymmetricKey { SymmetricKey(data: try bytes(vector, "conversation_key")) }

    @Test("conversation keys, padded lengths, encryption and decryption reproduce every valid vector")
    func valid() throws {
        let valid = try #require(try Self.vectors()["valid"])
        var count = 0
        for vector in Self.list(valid["get_conversation_key"]) {
            let key = try NIP44.conversationKey(secret: try Self.secret(vector, "sec1"), publicKeyHex: try Self.text(vector, "pub2"))
            #expect(key.withUnsafeBytes { Array($0) }.lowercaseHex == vector["conversation_key"]?.stringValue)
            count += 1
        }
        for pair in Self.list(valid["calc_padded_len"]) {
            let items = Self.list(pair).compactMap(\.int64Value)
            #expect(NIP44.paddedLength(Int(items[0])) == Int(items[1]), "\(items)")
            count += 1
        }
        for vector in Self.list(valid["encrypt_decrypt"]) {
            let sec1 = try Self.secret(vector, "sec1")
            let sec2 = try Self.secret(vector, "sec2")
            let key = try NIP44.conversationKey(secret: sec1, publicKeyHex: sec2.publicKeyHex)
            #expect(key.withUnsafeBytes { Array($0) }.lowercaseHex == vector["conversation_key"]?.stringValue)
            // Symmetric: the other side derives the same key.
            #expect(
                try NIP44.conversationKey(secret: sec2, publicKeyHex: sec1.publicKeyHex).withUnsafeBytes { Array($0) }
                    == key.withUnsafeBytes { Array($0) })
            let plaintext = try Self.text(vector, "plaintext")
            let payload = try NIP44.encrypt(plaintext, conversationKey: key, nonce: try Self.bytes(vector, "nonce"))
            #expect(payload == vector["payload"]?.stringValue)
            #expect(try NIP44.decrypt(payload, conversationKey: key) == plaintext)
            count += 1
        }
        for vector in Self.list(valid["encrypt_decrypt_long_msg"]) {
            let pattern = try Self.text(vector, "pattern")
            let repeats = Int(vector["repeat"]?.int64Value ?? 0)
            let plaintext = String(repeating: pattern, count: repeats)
            #expect(Array(SHA256.hash(data: Array(plaintext.utf8))).lowercaseHex == vector["plaintext_sha256"]?.stringValue)
            let key = try Self.key(vector)
            let payload = try NIP44.encrypt(plaintext, conversationKey: key, nonce: try Self.bytes(vector, "nonce"))
            #expect(Array(SHA256.hash(data: Array(payload.utf8))).lowercaseHex == vector["payload_sha256"]?.stringValue)
            #expect(try NIP44.decrypt(payload, conversationKey: key) == plaintext)
            count += 1
        }
        #expect(count == 35 + 24 + 10 + 3)
    }

    @Test("every invalid vector is refused: message lengths, conversation keys, payloads")
    func invalid() throws {
        let invalid = try #require(try Self.vectors()["invalid"])
        for length in Self.list(invalid["encrypt_msg_lengths"]).compactMap(\.int64Value) {
            #expect(throws: NIP44.Failure.self) {
                try NIP44.encrypt(String(repeating: "a", count: Int(length)), conversationKey: SymmetricKey(size: .bits256))
            }
        }
        for vector in Self.list(invalid["get_conversation_key"]) {
            let secret = [UInt8](hex: vector["sec1"]?.stringValue ?? "").flatMap(NostrSecretKey.init(bytes:))
            guard let secret else { continue }  // a secret past the curve order is refused already
            #expect(throws: NIP44.Failure.self, "\(vector["note"]?.stringValue ?? "")") {
                try NIP44.conversationKey(secret: secret, publicKeyHex: vector["pub2"]?.stringValue ?? "")
            }
        }
        for vector in Self.list(invalid["decrypt"]) {
            let key = try Self.key(vector)
            #expect(throws: NIP44.Failure.self, "\(vector["note"]?.stringValue ?? "")") {
                try NIP44.decrypt(vector["payload"]?.stringValue ?? "", conversationKey: key)
            }
        }
    }
}
