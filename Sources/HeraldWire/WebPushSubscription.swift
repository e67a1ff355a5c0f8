import Crypto
import Foundation

/// A Web Push subscription as `PushSubscription.toJSON()` and UnifiedPush connectors give it:
/// `{"endpoint": "https://…", "expirationTime": null, "keys": {"p256dh": "…", "auth": "…"}}`.
/// Whoever registers chooses the endpoint, so it is checked before anything is sent to it.
public struct WebPushSubscription: Codable, Sendable, Hashable {
    public var endpoint: String
    public var keys: Keys
    /// Browsers send it, as null mostly; kept for round trips, not used.
    public var expirationTime: Double?
    /// Whether the device asked for WebKit's declarative form of visible pushes. Not part of the
    /// browser's object (registration takes it beside `subscription`, so no key inside the
    /// object is read as it): it rides in ``storageToken``.
    public var declarative = false

    public struct Keys: Codable, Sendable, Hashable {
        /// The subscriber's P-256 public key, uncompressed (65 bytes), base64url.
        public var p256dh: String
        /// The 16-byte authentication secret, base64url.
        public var auth: String

        public init(p256dh: String, auth: String) {
            self.p256dh = p256dh
            self.auth = auth
        }
    }

    public init(endpoint: String, keys: Keys, expirationTime: Double? = nil, declarative: Bool = false) {
        self.endpoint = endpoint
        self.keys = keys
        self.expirationTime = expirationTime
        self.declarative = declarative
    }

    enum CodingKeys: String, CodingKey {
        case endpoint, keys, expirationTime
    }

    /// The longest endpoint taken; push services' are far shorter.
    public static let maxEndpointBytes = 1_000

    /// Why a subscription was refused: the field and a sentence for the caller.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var field: String
        public var message: String
        public var description: String { message }
    }

    /// What encryption needs: the key bytes, checked.
    public struct Checked: Sendable, Hashable {
        public var endpoint: URL
        public var p256dh: Data
        public var auth: Data
        /// Visible pushes go in WebKit's declarative form.
        public var declarative = false
    }

    /// Checks the endpoint (https, or http when `allowInsecure`; a host; at most
    /// ``maxEndpointBytes``), that `p256dh` is a point on P-256 and that `auth` is 16 bytes.
    public func checked(allowInsecure: Bool = false) throws(Invalid) -> Checked {
        guard endpoint.utf8.count <= Self.maxEndpointBytes else {
            throw Invalid(field: "endpoint", message: "the endpoint is longer than \(Self.maxEndpointBytes) bytes")
        }
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw Invalid(field: "endpoint", message: "the endpoint is not an absolute URL")
        }
        guard scheme == "https" || (scheme == "http" && allowInsecure) else {
            throw Invalid(field: "endpoint", message: "the endpoint must be https")
        }
        guard url.user == nil, url.password == nil else {
            throw Invalid(field: "endpoint", message: "the endpoint must not carry credentials")
        }
        guard let key = Data(base64URL: keys.p256dh), key.count == 65,
            (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil
        else {
            throw Invalid(field: "keys.p256dh", message: "keys.p256dh must be base64url of a 65-byte uncompressed P-256 point on the curve")
        }
        guard let auth = Data(base64URL: keys.auth), auth.count == 16 else {
            throw Invalid(field: "keys.auth", message: "keys.auth must be base64url of 16 bytes")
        }
        return Checked(endpoint: url, p256dh: key, auth: auth, declarative: declarative)
    }

    /// The subscription as Herald stores it in a device's token: its endpoint and keys as
    /// sorted JSON, so one subscription is always the same token (dead-token memory, the token
    /// cache and duplicates all compare tokens), and `"declarative": true` when it was asked
    /// for. Without the flag the token is what it was before the flag existed, so tokens stored
    /// then read as plain subscriptions and a plain subscription's token never changed.
    public var storageToken: String {
        let stored = Stored(endpoint: endpoint, keys: keys, declarative: declarative ? true : nil)
        // Encoding a struct of strings cannot fail.
        return (try? WireJSON.encodeString(stored)) ?? ""
    }

    /// The subscription a stored token holds; nil when the token is not one.
    public init?(storageToken: String) {
        guard storageToken.utf8.first == UInt8(ascii: "{"),
            let decoded = try? WireJSON.decode(Stored.self, from: Data(storageToken.utf8))
        else { return nil }
        self.init(endpoint: decoded.endpoint, keys: decoded.keys, declarative: decoded.declarative ?? false)
    }

    /// The stored form: the only place `declarative` is a key.
    private struct Stored: Codable {
        var endpoint: String
        var keys: Keys
        var declarative: Bool?
    }
}
