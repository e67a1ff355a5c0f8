import Crypto
import Foundation

/// The sealed-payload envelope: a push's data keys encrypted to the device's
/// X25519 key with HPKE (RFC 9180, base mode: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
/// ChaCha20-Poly1305), so Apple and Google carry only ciphertext.
///
/// A sealed push carries exactly three data keys (beside `aps` on APNs, under `data` on FCM):
/// - `sealed`: base64 of the 32-byte encapsulated key followed by the ciphertext of the data map
///   as JSON (``WireJSON``). One key, not two: the encapsulated key has a fixed length, and one
///   value costs fewer bytes of the push's 4 KB.
/// - `seal_kid`: which device key it was sealed to (``SealPublicKey/keyID``).
/// - `sealed_type`: the push's type in clear (a `notification_type`, a backend `action` or a wake
///   kind), so a device that cannot open it still shows that type's fallback text.
///
/// The key id and type are bound as associated data: a push service that changed either makes
/// opening fail rather than show the wrong text for real data.
public enum SealedPush {
    public static let sealedKey = "sealed"
    public static let keyIDKey = "seal_kid"
    public static let typeKey = "sealed_type"
    /// The keys of a sealed push's data, and no others.
    public static let envelopeKeys: Set<String> = [sealedKey, keyIDKey, typeKey]

    /// HPKE `info`: names the protocol and its version, so a key reused elsewhere cannot be
    /// tricked into opening these, and a v2 can be told apart.
    public static let info = Data("herald sealed push v1".utf8)
    public static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly
    static let encapsulatedKeyBytes = 32

    /// The data keys of the sealed push for `data`, to the device key `recipient`.
    public static func seal(_ data: [String: String], to recipient: SealPublicKey, typeHint: String) throws -> [String: String] {
        var sender = try HPKE.Sender(recipientKey: recipient.key, ciphersuite: ciphersuite, info: info)
        let ciphertext = try sender.seal(try WireJSON.encode(data), authenticating: associatedData(keyID: recipient.keyID, typeHint: typeHint))
        return [
            sealedKey: (sender.encapsulatedKey + ciphertext).base64EncodedString(),
            keyIDKey: recipient.keyID,
            typeKey: typeHint,
        ]
    }

    /// The original data keys of a sealed push. Throws ``SealOpenError`` for a push that is not
    /// sealed, was sealed to another key, or was changed on the way.
    public static func open(
        _ data: [String: String], with privateKey: Curve25519.KeyAgreement.PrivateKey
    ) throws(SealOpenError) -> [String: String] {
        guard let sealed = data[sealedKey], let keyID = data[keyIDKey], let typeHint = data[typeKey] else {
            throw SealOpenError(.notSealed, "the push lacks \(sealedKey), \(keyIDKey) or \(typeKey)")
        }
        let ownKeyID = SealPublicKey(privateKey.publicKey).keyID
        guard keyID == ownKeyID else {
            throw SealOpenError(.wrongKey, "sealed to key \(keyID), this device holds \(ownKeyID)")
        }
        guard let bytes = Data(base64Encoded: sealed), bytes.count > encapsulatedKeyBytes else {
            throw SealOpenError(.malformed, "\(sealedKey) is not base64 of an encapsulated key and a ciphertext")
        }
        let plaintext: Data
        do {
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: ciphersuite, info: info,
                encapsulatedKey: bytes.prefix(encapsulatedKeyBytes)
            )
            plaintext = try recipient.open(
                bytes.dropFirst(encapsulatedKeyBytes), authenticating: associatedData(keyID: keyID, typeHint: typeHint)
            )
        } catch {
            throw SealOpenError(.authenticationFailed, "the sealed data does not open with this key: \(error)")
        }
        guard let opened = try? WireJSON.decode([String: String].self, from: plaintext) else {
            throw SealOpenError(.malformed, "the opened data is not a JSON object of strings")
        }
        return opened
    }

    /// A collapse id that still collapses (the same id and key give the same value) but no longer
    /// names what it is about: `swap:<id>` would tell the push service the swap id the ciphertext
    /// hides. HMAC-SHA256 keyed with the device's public key, which only Herald and the device hold.
    public static func opaqueCollapseID(_ collapseID: String, for key: SealPublicKey) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(collapseID.utf8), using: SymmetricKey(data: key.key.rawRepresentation)
        )
        return "sealed:" + mac.prefix(16).lowercaseHex
    }

    /// Whether a push's data is a sealed envelope.
    public static func isSealed(_ data: [String: String]) -> Bool { data[sealedKey] != nil }

    /// `["<kid>","<type>"]` as JSON: unambiguous however either value is spelled.
    static func associatedData(keyID: String, typeHint: String) throws -> Data {
        try WireJSON.encode([keyID, typeHint])
    }
}

/// A device's X25519 public key for sealed pushes, as it registers it: base64 (or base64url) of
/// the 32 raw bytes.
public struct SealPublicKey: Sendable, Hashable {
    public let key: Curve25519.KeyAgreement.PublicKey
    /// Hex of the first 8 bytes of SHA-256 of the raw key: names the key without revealing it,
    /// so a device that rotated its key can tell which one a push was sealed to.
    public let keyID: String

    public init(_ key: Curve25519.KeyAgreement.PublicKey) {
        self.key = key
        self.keyID = SHA256.hash(data: key.rawRepresentation).prefix(8).lowercaseHex
    }

    /// Parses the registration form; base64url and missing padding are accepted too.
    public init(base64 text: String) throws(InvalidSealKey) {
        guard let bytes = Data(base64URL: text.trimmingCharacters(in: .whitespaces)) else {
            throw InvalidSealKey(message: "seal_key is not base64 of a 32-byte X25519 public key")
        }
        guard bytes.count == 32 else {
            throw InvalidSealKey(message: "seal_key is \(bytes.count) bytes; an X25519 public key is 32")
        }
        do {
            self.init(try Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes))
        } catch {
            throw InvalidSealKey(message: "seal_key is not a usable X25519 public key")
        }
    }

    /// Standard base64 of the 32 raw bytes: the form stored and registered.
    public var base64: String { key.rawRepresentation.base64EncodedString() }

    public static func == (lhs: SealPublicKey, rhs: SealPublicKey) -> Bool {
        lhs.key.rawRepresentation == rhs.key.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(key.rawRepresentation) }
}

/// A `seal_key` that is not an X25519 public key.
public struct InvalidSealKey: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Why a sealed push could not be opened. The device shows the type's fallback content instead.
public struct SealOpenError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: String, Sendable, Hashable {
        case notSealed = "not_sealed"
        /// Sealed to a key this device does not hold (an old key, another device).
        case wrongKey = "wrong_key"
        case malformed
        /// Changed on the way, or sealed to another key with a forged key id.
        case authenticationFailed = "authentication_failed"
        /// The device has no seal key configured.
        case noKey = "no_key"
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }
}
