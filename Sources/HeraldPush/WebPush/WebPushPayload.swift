import Crypto
import Foundation
import HeraldWire

/// What a Web Push message carries and the headers that steer it (RFC 8030 §5): the plaintext
/// is the data map an FCM data message would carry, as JSON, so the device decodes a Web Push
/// message exactly as it decodes an FCM one. A subscription that asked for WebKit's declarative
/// form gets its visible pushes in that form (``DeclarativeWebPushMessage``), the same data map
/// inside.
public enum WebPushPayload {
    /// RFC 8030 asks services to take at least 4,096 bytes of encrypted body; more is refused.
    public static let maxBodyBytes = 4096
    /// The most plaintext that fits: the body less the `aes128gcm` header, delimiter and tag.
    public static let maxPlaintextBytes = maxBodyBytes - WebPushMessage.headerBytes - WebPushMessage.overheadBytes
    /// A message without an expiry is worth a day to the wallet; services cap TTL anyway.
    public static let defaultTTL = 86_400

    /// The plaintext: the data map as JSON. A visible alert (a backend event) also carries its
    /// text under `notification`, as FCM's message does beside the data: a Web Push message has
    /// no other place for it, and the app must show it. Wakes carry the data map alone, as an
    /// FCM data message does, and the plugin writes their text.
    ///
    /// - Parameter navigate: The https URL a declarative notification opens, for a subscription
    ///   that asked for the declarative form; nil renders the plain form.
    public static func render(_ message: PushMessage, navigate: String? = nil) throws -> Data {
        if let navigate, let declarative = declarative(message, navigate: navigate) { return try WireJSON.encode(declarative) }
        guard message.kind == .alert, let alert = message.alert, message.data["notification"] == nil else {
            return try WireJSON.encode(message.data)
        }
        return try WireJSON.encode(AlertPlaintext(data: message.data, notification: alert))
    }

    /// The declarative form of a visible push: one with text for the lock screen (a wake's, which
    /// iOS shows unless the extension rewrites it, or a backend alert's). A push without text (a
    /// wake's data message, a background push) has nothing to declare: nil, and it goes in the
    /// plain form, for the service worker to handle as today.
    public static func declarative(_ message: PushMessage, navigate: String) -> DeclarativeWebPushMessage? {
        guard message.kind != .background, let alert = message.alert else { return nil }
        return DeclarativeWebPushMessage(
            notification: .init(title: alert.title, body: alert.body, navigate: navigate, tag: tag(message), data: message.data))
    }

    /// The declarative notification's `tag`: the collapse id, which already names what replaces
    /// what; without one a digest of the data map, so a push delivered twice (the outbox is
    /// at-least-once) replaces itself on the lock screen instead of showing twice.
    static func tag(_ message: PushMessage) -> String {
        if let id = message.collapseID, !id.isEmpty { return id }
        let data = (try? WireJSON.encode(message.data)) ?? Data()
        return Data(SHA256.hash(data: data).prefix(16)).base64URLEncodedString
    }

    /// The data keys and `notification` side by side in one object.
    private struct AlertPlaintext: Encodable {
        var data: [String: String]
        var notification: NotificationText

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in data { try container.encode(value, forKey: Key(stringValue: key)) }
            try container.encode(notification, forKey: Key(stringValue: "notification"))
        }
    }

    /// Refuses a message whose encrypted body would pass ``maxBodyBytes``; returns the plaintext.
    ///
    /// - Parameter navigate: As for ``render(_:navigate:)``.
    @discardableResult
    public static func validate(_ message: PushMessage, navigate: String? = nil) throws(PushValidationError) -> Data {
        if message.verbatim != nil { throw PushValidationError(.invalidMessage, message: "a verbatim APNs or FCM push has no Web Push form") }
        return try plaintext(message, navigate: navigate)
    }

    /// The plaintext, refused when its encrypted body would pass ``maxBodyBytes``.
    static func plaintext(_ message: PushMessage, navigate: String? = nil) throws(PushValidationError) -> Data {
        let what = navigate.flatMap { declarative(message, navigate: $0) } == nil ? "the Web Push plaintext" : "the declarative Web Push message"
        return try PayloadChecks.checkSize(of: what, limit: maxPlaintextBytes, service: "a 4,096-byte encrypted Web Push body") {
            try render(message, navigate: navigate)
        }
    }

    /// `TTL`: seconds until the message's expiry (0 when it is past: deliver now or drop).
    public static func ttl(_ message: PushMessage, now: Date) -> Int {
        guard let expiresAt = message.expiresAt else { return defaultTTL }
        return max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down)))
    }

    /// `Urgency`: a wake (a payment, a relayed request, a Lightning-address request) must reach a
    /// phone in battery saving now; anything else may wait for the next window.
    public static func urgency(_ message: PushMessage) -> String {
        message.kind == .wake ? "high" : "normal"
    }

    /// `Topic`: the collapse id when it fits the header's rules (at most 32 base64url
    /// characters), else a digest of it, so equal ids still replace each other.
    public static func topic(_ message: PushMessage) -> String? {
        guard let id = message.collapseID, !id.isEmpty else { return nil }
        if id.utf8.count <= 32, id.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) {
            return id
        }
        return String(Data(SHA256.hash(data: Data(id.utf8)).prefix(24)).base64URLEncodedString.prefix(32))
    }
}
