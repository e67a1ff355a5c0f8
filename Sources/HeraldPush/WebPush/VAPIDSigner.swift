import Crypto
import Foundation
import HeraldWire
import JWTKit
import NIOConcurrencyHelpers

/// The claims of a VAPID token (RFC 8292 §2): the push service's origin, when the token ends,
/// and whom the push service may contact about this sender.
struct VAPIDClaims: JWTPayload {
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim

    /// The push service checks them; the sender has nothing to verify.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Signs the `Authorization: vapid t=…, k=…` header (RFC 8292) with the server's P-256 key.
public struct VAPIDSigner: Sendable {
    private let key: ES256PrivateKey
    /// The public key as apps give it to `pushManager.subscribe` (`applicationServerKey`) and as
    /// the header's `k`: uncompressed point, base64url.
    public let publicKey: String
    /// `mailto:` or `https:` contact, the token's `sub`.
    public let contact: String
    /// How long a token lasts: at most 24 hours (RFC 8292 §2), 12 by default.
    public let lifetime: TimeInterval
    /// One header per origin, reused for the first half of its token's life: an ES256 signature
    /// per push would cost more than the push's encryption. Registrations choose the origins, so
    /// a full cache is emptied rather than grown.
    private let cache = NIOLockedValueBox([String: (header: String, expires: Date)]())
    static let cachedOrigins = 1_024

    /// Parses the key now, so a bad key fails at start-up rather than on the first push.
    public init(privateKeyPEM: String, contact: String, lifetime: TimeInterval = 12 * 3600) throws(PushConfigurationError) {
        guard contact.hasPrefix("mailto:") || contact.hasPrefix("https://") else {
            throw PushConfigurationError(message: "the VAPID contact must be a mailto: or https: URL")
        }
        guard lifetime > 0, lifetime <= 24 * 3600 else {
            throw PushConfigurationError(message: "a VAPID token lasts at most 24 hours")
        }
        let signing: P256.Signing.PrivateKey
        do {
            signing = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
            key = try ES256PrivateKey(pem: privateKeyPEM)
        } catch {
            // Nothing about the key belongs in a log.
            throw PushConfigurationError(message: "the VAPID key is not a PEM P-256 private key")
        }
        publicKey = signing.publicKey.x963Representation.base64URLEncodedString
        self.contact = contact
        self.lifetime = lifetime
    }

    /// The `Authorization` header's value for a push to `endpoint`, valid from `now` for
    /// ``lifetime``: its audience is the endpoint's origin (scheme, host and any port).
    public func authorization(for endpoint: URL, now: Date) async throws -> String {
        guard let origin = Self.origin(of: endpoint) else {
            throw PushConfigurationError(message: "a Web Push endpoint needs a scheme and a host")
        }
        let halfLife = lifetime / 2
        if let cached = cache.withLockedValue({ $0[origin] }), cached.expires.timeIntervalSince(now) > halfLife {
            return cached.header
        }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, serializer: JWTIntegerDates.serializer)
        let expiry = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + lifetime).rounded(.down))
        let claims = VAPIDClaims(aud: AudienceClaim(value: [origin]), exp: ExpirationClaim(value: expiry), sub: SubjectClaim(value: contact))
        let header = "vapid t=\(try await keys.sign(claims, header: ["typ": "JWT"])), k=\(publicKey)"
        cache.withLockedValue { cache in
            if cache.count >= Self.cachedOrigins { cache.removeAll() }
            cache[origin] = (header, expiry)
        }
        return header
    }

    /// Scheme, host and any port: the JWT's audience, and what a push service's requests are
    /// counted under.
    static func origin(of endpoint: URL) -> String? {
        guard let scheme = endpoint.scheme, let host = endpoint.host else { return nil }
        return "\(scheme)://\(host)" + (endpoint.port.map { ":\($0)" } ?? "")
    }

    /// A new key, as PKCS#8 PEM, for `herald webpush keygen`.
    public static func makeKeyPEM() -> String {
        P256.Signing.PrivateKey().pemRepresentation
    }
}
