import Crypto
import Foundation

/// Web Push message encryption (RFC 8291) in the `aes128gcm` content coding (RFC 8188), as one
/// record: what a Web Push service or a UnifiedPush distributor carries to a browser or a phone
/// without being able to read it. The server encrypts to a subscription's `p256dh` key and
/// `auth` secret; the device opens it with its private key and the same secret.
///
/// The body is the RFC 8188 header (salt, record size, the sender's ephemeral public key as key
/// id) followed by the one record: the plaintext, the final-record delimiter `0x02`, and the
/// AES-128-GCM tag.
public enum WebPushMessage {
    /// The record size written in the header, and the most a record may hold.
    public static let recordSize = 4096
    /// Header bytes: salt (16), record size (4), key id length (1), the sender's key (65).
    public static let headerBytes = 16 + 4 + 1 + 65
    /// Ciphertext bytes on top of the plaintext: the delimiter and the GCM tag.
    public static let overheadBytes = 1 + 16

    public enum Failure: Error, Equatable, Sendable {
        /// `p256dh` is not a 65-byte uncompressed point on P-256.
        case invalidKey
        /// `auth` is not 16 bytes.
        case invalidAuthSecret
        /// The plaintext does not fit one record.
        case tooLarge
        /// Not an `aes128gcm` body of one record with a P-256 key id.
        case malformed(String)
        /// The record does not open with this key and secret, or is not a final record.
        case cannotOpen
    }

    /// `plaintext` encrypted for the subscription with `subscriberKey` (`p256dh`, 65 bytes) and
    /// `authSecret` (`auth`, 16 bytes). Each message gets a fresh salt and a fresh ephemeral key;
    /// passing them is for reproducing RFC 8291's example only.
    public static func encrypt(
        _ plaintext: Data, to subscriberKey: Data, authSecret: Data,
        salt: Data? = nil, senderKey: P256.KeyAgreement.PrivateKey? = nil
    ) throws(Failure) -> Data {
        guard authSecret.count == 16 else { throw .invalidAuthSecret }
        guard subscriberKey.count == 65, let subscriber = try? P256.KeyAgreement.PublicKey(x963Representation: subscriberKey) else {
            throw .invalidKey
        }
        guard plaintext.count + overheadBytes <= recordSize else { throw .tooLarge }
        let salt = salt ?? Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let sender = senderKey ?? P256.KeyAgreement.PrivateKey()
        let senderPublic = sender.publicKey.x963Representation
        guard let shared = try? sender.sharedSecretFromKeyAgreement(with: subscriber) else { throw .invalidKey }
        let (key, nonce) = contentKeys(
            shared: shared, authSecret: authSecret, subscriberKey: subscriberKey, senderKey: senderPublic, salt: salt)
        var padded = plaintext
        padded.append(2)
        guard let sealed = try? AES.GCM.seal(padded, using: key, nonce: nonce) else { throw .cannotOpen }
        var body = Data(capacity: headerBytes + padded.count + 16)
        body.append(salt)
        body.append(contentsOf: withUnsafeBytes(of: UInt32(recordSize).bigEndian, Array.init))
        body.append(UInt8(senderPublic.count))
        body.append(senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// The plaintext of `body`, opened with the subscription's private key and auth secret.
    public static func decrypt(_ body: Data, privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) throws(Failure) -> Data {
        guard authSecret.count == 16 else { throw .invalidAuthSecret }
        let bytes = [UInt8](body)
        guard bytes.count >= 21 else { throw .malformed("shorter than the aes128gcm header") }
        let salt = Data(bytes[0..<16])
        let size = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idLength = Int(bytes[20])
        guard idLength == 65, bytes.count >= 21 + idLength else { throw .malformed("the key id is not a P-256 public key") }
        let senderKey = Data(bytes[21..<(21 + idLength)])
        let record = bytes[(21 + idLength)...]
        guard size >= 18, record.count >= overheadBytes, record.count <= size else {
            throw .malformed("not one record of the size the header gives")
        }
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderKey),
            let shared = try? privateKey.sharedSecretFromKeyAgreement(with: sender)
        else { throw .malformed("the key id is not a point on P-256") }
        let (key, nonce) = contentKeys(
            shared: shared, authSecret: authSecret, subscriberKey: privateKey.publicKey.x963Representation,
            senderKey: senderKey, salt: salt)
        guard let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: record.dropLast(16), tag: record.suffix(16)),
            let padded = try? AES.GCM.open(box, using: key)
        else { throw .cannotOpen }
        // Padding is zeros after the delimiter; the last record's delimiter is 2.
        guard let end = padded.lastIndex(where: { $0 != 0 }), padded[end] == 2 else { throw .cannotOpen }
        return Data(padded[padded.startIndex..<end])
    }

    /// RFC 8291 §3.3–3.4 and RFC 8188 §2.2: the content key and nonce of a message.
    static func contentKeys(
        shared: SharedSecret, authSecret: Data, subscriberKey: Data, senderKey: Data, salt: Data
    ) -> (SymmetricKey, AES.GCM.Nonce) {
        let secret = shared.withUnsafeBytes { SymmetricKey(data: Data($0)) }
        let authPRK = HKDF<SHA256>.extract(inputKeyMaterial: secret, salt: authSecret)
        let keyInfo = Data("WebPush: info".utf8) + [0] + subscriberKey + senderKey
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: authPRK, info: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // 12 bytes always make a nonce.
        return (key, nonce.withUnsafeBytes { try! AES.GCM.Nonce(data: Data($0)) })
    }
}
