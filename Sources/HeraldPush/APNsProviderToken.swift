import Foundation
import JWTKit

/// The claims of an APNs provider token: the team id and when it was made.
struct APNsProviderTokenClaims: JWTPayload {
    var iss: IssuerClaim
    var iat: IssuedAtClaim

    /// APNs checks the claims itself; there is nothing for the sender to verify.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Signs APNs provider tokens (ES256 JWTs) with the `.p8` key.
struct APNsProviderTokenSigner: Sendable {
    private let key: ES256PrivateKey
    private let keyID: String
    private let teamID: String

    /// Parses the key now, so a bad key fails at start-up rather than on the first push.
    init(configuration: APNsConfiguration) throws(PushConfigurationError) {
        do {
            key = try ES256PrivateKey(pem: configuration.signingKeyPEM)
        } catch {
            // The underlying error is not passed on: nothing about the key belongs in a log.
            throw PushConfigurationError(message: "the APNs signing key is not a PKCS#8 PEM P-256 private key")
        }
        keyID = configuration.keyID
        teamID = configuration.teamID
    }

    /// A token issued at `now`, truncated to whole seconds: Apple wants `iat` as an integer.
    func sign(now: Date) async throws -> (token: String, issuedAt: Date) {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID), serializer: JWTIntegerDates.serializer)
        let claims = APNsProviderTokenClaims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: issuedAt))
        return (try await keys.sign(claims, kid: JWKIdentifier(string: keyID)), issuedAt)
    }
}

/// jwt-kit's default encoder writes dates as fractional seconds; APNs and Google expect
/// NumericDate as an integer.
enum JWTIntegerDates {
    static var serializer: DefaultJWTSerializer {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .integerSecondsSince1970
        encoder.outputFormatting = .sortedKeys
        return DefaultJWTSerializer(jsonEncoder: encoder)
    }
}

/// A provider cannot start with this configuration (a key that does not parse, a service
/// account with a missing field). Never carries key material.
public struct PushConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
