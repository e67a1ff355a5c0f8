import Crypto
import Foundation

/// One identity's signature over a registration's preimage.
public struct WakeIdentityProof: Codable, Sendable, Hashable {
    public var identity: String
    /// `ln:`: 104 zbase32 characters. `pk:`: 128 lower-case hex digits.
    public var sig: String

    public init(identity: String, sig: String) {
        self.identity = identity
        self.sig = sig
    }
}

/// `POST /v1/devices`: a device of an app, its push address, the key wakes are sealed to, the
/// hash of the bearer secret it made, the identities it proves and the topics it wants.
public struct WakeRegistrationRequest: Codable, Sendable, Hashable {
    public enum Platform: String, Codable, Sendable, Hashable { case apns, fcm }
    public enum Environment: String, Codable, Sendable, Hashable { case production, sandbox }

    public var app: String
    public var installID: String
    public var platform: Platform
    public var environment: Environment
    public var pushToken: String
    /// Compressed secp256k1 public key, 66 lower-case hex digits.
    public var encryptionKey: String
    /// Lower-case hex SHA-256 of the `wkd_` secret.
    public var secretSHA256: String
    public var identities: [String]
    public var topics: [String]
    /// Unix seconds.
    public var ts: Int64
    public var proofs: [WakeIdentityProof]

    public init(
        app: String, installID: String, platform: Platform, environment: Environment, pushToken: String, encryptionKey: String,
        secretSHA256: String, identities: [String], topics: [String], ts: Int64, proofs: [WakeIdentityProof] = []
    ) {
        self.app = app
        self.installID = installID
        self.platform = platform
        self.environment = environment
        self.pushToken = pushToken
        self.encryptionKey = encryptionKey
        self.secretSHA256 = secretSHA256
        self.identities = identities
        self.topics = topics
        self.ts = ts
        self.proofs = proofs
    }

    enum CodingKeys: String, CodingKey {
        case app
        case installID = "install_id"
        case platform, environment
        case pushToken = "push_token"
        case encryptionKey = "encryption_key"
        case secretSHA256 = "secret_sha256"
        case identities, topics, ts, proofs
    }

    /// The identities deduplicated and sorted bytewise, as the preimage lists them.
    public var canonicalIdentities: [String] { Self.canonical(identities) }
    public var canonicalTopics: [String] { Self.canonical(topics) }

    public static func canonical(_ list: [String]) -> [String] {
        Array(Set(list)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The 12 lines every identity signs (no final newline), for the gateway named `audience`.
    public func preimage(audience: String) -> String {
        [
            "wake-register-v1",
            "aud:" + audience,
            "app:" + app,
            "install:" + installID,
            "platform:" + platform.rawValue,
            "environment:" + environment.rawValue,
            "push_token:" + pushToken,
            "encryption_key:" + encryptionKey,
            "secret_sha256:" + secretSHA256,
            "identities:" + canonicalIdentities.joined(separator: ","),
            "topics:" + canonicalTopics.joined(separator: ","),
            "ts:" + String(ts),
        ].joined(separator: "\n")
    }
}

/// The device's bearer credential: `wkd_` and 43 base64url characters (32 random bytes). The
/// gateway keeps only its SHA-256.
public enum WakeDeviceSecret {
    public static let prefix = "wkd_"

    public static func make(bytes: [UInt8]? = nil) -> String {
        prefix + Data(bytes ?? SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64URLEncodedString
    }

    /// Lower-case hex SHA-256 of the whole token, `wkd_` included.
    public static func sha256(_ token: String) -> String {
        Array(SHA256.hash(data: Array(token.utf8))).lowercaseHex
    }

    /// Whether `token` has the form of a secret (before any lookup).
    public static func hasForm(_ token: String) -> Bool {
        token.hasPrefix(prefix) && token.utf8.count == prefix.utf8.count + 43
            && token.utf8.dropFirst(prefix.utf8.count).allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}

/// Topic names and patterns as the gateway (and bitkit-core, before it signs) accept them.
public enum WakeTopicName {
    public static let maximumLength = 64
    public static let maximumPerDevice = 32

    /// `namespace.Name`: a first segment of lower-case letters, digits, `_` or `-` starting
    /// with a letter, then one or more segments starting with a letter of either case.
    public static func isName(_ text: String) -> Bool {
        guard text.utf8.count <= maximumLength else { return false }
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count >= 2 && isNamespace(segments)
    }

    /// `namespace.*`, namespace one or more segments; 64 characters in all at most.
    public static func isPattern(_ text: String) -> Bool {
        guard text.utf8.count <= maximumLength, text.hasSuffix(".*") else { return false }
        return isNamespace(text.dropLast(2).split(separator: ".", omittingEmptySubsequences: false))
    }

    public static func isValid(_ text: String) -> Bool { isName(text) || isPattern(text) }

    private static func isNamespace(_ segments: [Substring]) -> Bool {
        guard let first = segments.first, let head = first.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(head),
            first.utf8.allSatisfy({ isLowerSegmentByte($0) })
        else { return false }
        return segments.dropFirst().allSatisfy { segment in
            guard let head = segment.utf8.first, head.isASCIILetterOrDigit, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(head) else {
                return false
            }
            return segment.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isLowerSegmentByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// Whether a device's subscription (a name or a pattern) takes `topic`.
    public static func subscription(_ subscription: String, matches topic: String) -> Bool {
        if subscription.hasSuffix(".*") { return topic.hasPrefix(subscription.dropLast(1)) }
        return subscription == topic
    }
}
