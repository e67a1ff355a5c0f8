import Crypto
import Foundation
import HeraldWire

/// A Nostr event (NIP-01): what a zap request and a zap receipt are.
public struct NostrEvent: Codable, Sendable, Hashable {
    /// SHA-256 of the event's serialization, 64 lower-case hex digits.
    public var id: String
    /// The author's x-only public key, 64 lower-case hex digits.
    public var pubkey: String
    public var createdAt: Int64
    public var kind: Int
    public var tags: [[String]]
    public var content: String
    /// The BIP-340 signature of `id`, 128 hex digits.
    public var sig: String

    enum CodingKeys: String, CodingKey {
        case id, pubkey, kind, tags, content, sig
        case createdAt = "created_at"
    }

    public init(id: String, pubkey: String, createdAt: Int64, kind: Int, tags: [[String]], content: String, sig: String) {
        self.id = id
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.sig = sig
    }

    /// A new event signed by `key`: its id computed and signed now.
    public static func signed(kind: Int, tags: [[String]], content: String, createdAt: Int64, by key: NostrSecretKey) -> NostrEvent {
        var event = NostrEvent(id: "", pubkey: key.publicKeyHex, createdAt: createdAt, kind: kind, tags: tags, content: content, sig: "")
        let id = event.computedID
        event.id = id.lowercaseHex
        event.sig = key.sign(id).lowercaseHex
        return event
    }

    /// `[0, pubkey, created_at, kind, tags, content]` as NIP-01 serializes it: no whitespace,
    /// UTF-8, and in strings only `\n`, `"`, `\\`, `\r`, `\t`, `\b` and `\f` escaped.
    public var serializedForID: Data {
        var out = [UInt8]()
        out.reserveCapacity(128 + content.utf8.count + tags.reduce(0) { $0 + $1.reduce(0) { $0 + $1.utf8.count + 3 } })
        func string(_ text: String) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case 0x0A: out += [0x5C, UInt8(ascii: "n")]
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0D: out += [0x5C, UInt8(ascii: "r")]
                case 0x09: out += [0x5C, UInt8(ascii: "t")]
                case 0x08: out += [0x5C, UInt8(ascii: "b")]
                case 0x0C: out += [0x5C, UInt8(ascii: "f")]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out += Array("[0,".utf8)
        string(pubkey)
        out += Array(",\(createdAt),\(kind),[".utf8)
        for (index, tag) in tags.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            for (position, item) in tag.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                string(item)
            }
            out.append(UInt8(ascii: "]"))
        }
        out += Array("],".utf8)
        string(content)
        out.append(UInt8(ascii: "]"))
        return Data(out)
    }

    /// SHA-256 of ``serializedForID``.
    public var computedID: [UInt8] { Array(SHA256.hash(data: serializedForID)) }

    /// Whether `id` is the event's hash and `sig` signs it under `pubkey`.
    public var isValid: Bool {
        let id = computedID
        guard self.id.lowercased() == id.lowercaseHex,
            let signature = NostrHex.bytes(sig, count: 64), let key = NostrHex.bytes(pubkey, count: 32)
        else { return false }
        return Schnorr.verify(signature: signature, message: id, publicKey: key)
    }

    /// The values of every tag named `name` (the tag's items after its name).
    public func tags(named name: String) -> [[String]] {
        tags.filter { $0.first == name }.map { Array($0.dropFirst()) }
    }

    /// The event as compact JSON, for relays and for the receipt's `description`.
    public var json: String {
        (try? WireJSON.encodeString(self)) ?? "{}"
    }
}
