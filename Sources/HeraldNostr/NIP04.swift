import Crypto
import CryptoExtras
import Foundation
import HeraldSecp256k1

/// NIP-04 encrypted payloads: AES-256-CBC (PKCS #7 padding) under the x coordinate of the ECDH
/// point, written `base64(ciphertext)?iv=base64(iv)`. Superseded by NIP-44, but what an NWC
/// client sends a wallet whose info event (kind 13194) does not say it speaks NIP-44, so a
/// wallet that answers every client speaks both.
public enum NIP04 {
    /// The key two parties share: the ECDH point's x coordinate, unhashed.
    public static func sharedKey(secret: NostrSecretKey, publicKeyHex: String) throws(NIP44.Failure) -> SymmetricKey {
        guard let x = NostrHex.bytes(publicKeyHex, count: 32), let peer = NodeID(bytes: [0x02] + x),
            let own = NodeSecretKey(bytes: secret.secretBytes)
        else { throw NIP44.Failure("not an x-only secp256k1 public key") }
        return SymmetricKey(data: Array(own.sharedPoint(with: peer).dropFirst()))
    }

    /// Whether a payload is NIP-04's rather than NIP-44's.
    public static func isNIP04(_ payload: String) -> Bool { payload.contains("?iv=") }

    public static func encrypt(_ plaintext: String, key: SymmetricKey, iv: [UInt8]? = nil) throws(NIP44.Failure) -> String {
        let iv = iv ?? (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        do {
            let ciphertext = try AES._CBC.encrypt(Array(plaintext.utf8), using: key, iv: AES._CBC.IV(ivBytes: iv))
            return Data(ciphertext).base64EncodedString() + "?iv=" + Data(iv).base64EncodedString()
        } catch {
            throw NIP44.Failure("cannot encrypt: \(error)")
        }
    }

    public static func decrypt(_ payload: String, key: SymmetricKey) throws(NIP44.Failure) -> String {
        let parts = payload.components(separatedBy: "?iv=")
        guard parts.count == 2, let ciphertext = Data(base64Encoded: parts[0]), let iv = Data(base64Encoded: parts[1]), iv.count == 16,
            !ciphertext.isEmpty, ciphertext.count % 16 == 0
        else { throw NIP44.Failure("not a NIP-04 payload") }
        do {
            let plaintext = try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: Array(iv)))
            guard let text = String(bytes: plaintext, encoding: .utf8) else { throw NIP44.Failure("not UTF-8") }
            return text
        } catch let failure as NIP44.Failure {
            throw failure
        } catch {
            throw NIP44.Failure("cannot decrypt: \(error)")
        }
    }
}
