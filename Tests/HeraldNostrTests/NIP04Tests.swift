import Foundation
import HeraldNostr
import Testing

@Suite("NIP-04")
struct NIP04Tests {
    // Made by rust-nostr (PyPI nostr-sdk 0.45.1, `nip04_encrypt`) from secret key 1 to the public
    // key of secret key 2: a payload another implementation wrote, read here.
    static let one = "0000000000000000000000000000000000000000000000000000000000000001"
    static let two = "0000000000000000000000000000000000000000000000000000000000000002"
    static let payload = "IkXbf5Tncl2UeVIDszoTeMPy0D9nu2SW+GHwDixSNipGGTiUVbdWgu9x/nTT35HE?iv=ErhJQS6JVPXJuz992cW14A=="

    @Test("rust-nostr's payload opens with the other side's key; ours round-trips and is NIP-04's shape")
    func vector() throws {
        let first = try NostrSecretKey(text: Self.one)
        let second = try NostrSecretKey(text: Self.two)
        let key = try NIP04.sharedKey(secret: second, publicKeyHex: first.publicKeyHex)
        #expect(try NIP04.decrypt(Self.payload, key: key) == #"{"method":"get_balance","params":{}}"#)
        let back = try NIP04.sharedKey(secret: first, publicKeyHex: second.publicKeyHex)
        let iv = Array(Data(base64Encoded: "ErhJQS6JVPXJuz992cW14A==")!)
        #expect(try NIP04.encrypt(#"{"method":"get_balance","params":{}}"#, key: back, iv: iv) == Self.payload)
        #expect(NIP04.isNIP04(Self.payload))
        #expect(throws: NIP44.Failure.self) { try NIP04.decrypt("bm90IGEgcGF5bG9hZA==", key: key) }
        #expect(throws: NIP44.Failure.self) { try NIP04.decrypt("AAAA?iv=AAAA", key: key) }
    }
}
