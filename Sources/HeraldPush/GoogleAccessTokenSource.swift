import AsyncHTTPClient
import Foundation
import HeraldWire
import JWTKit
import NIOCore

/// Gets OAuth2 access tokens for a service account with the JWT-bearer grant (RFC 7523), the
/// way Google's libraries do: an RS256 assertion signed with the account's key is exchanged
/// at `token_uri` for a bearer token that lasts about an hour.
///
/// It speaks HTTP/1.1 or HTTP/2, whichever the endpoint offers (``EgressHTTPClient``): Google's
/// answers h2, but a token endpoint behind a gateway or a look-alike may not, and an FCM that
/// cannot get a token sends nothing at all.
struct GoogleAccessTokenSource: Sendable {
    private let key: Insecure.RSA.PrivateKey
    private let account: ServiceAccount
    private let configuration: FCMConfiguration
    private let client: EgressHTTPClient
    private let tokenURL: String
    private let tokenHost: String
    private let now: @Sendable () -> Date

    /// Parses the key now, so a bad key file fails at start-up.
    init(
        configuration: FCMConfiguration,
        httpClient: PushHTTPClient,
        now: @escaping @Sendable () -> Date
    ) throws(PushConfigurationError) {
        do {
            tokenHost = try PushOrigin(url: configuration.serviceAccount.tokenURI).host
        } catch {
            throw PushConfigurationError(message: "the service account's token_uri: \(error)")
        }
        tokenURL = configuration.serviceAccount.tokenURI
        client = httpClient.tokenClient
        do {
            key = try Insecure.RSA.PrivateKey(pem: configuration.serviceAccount.privateKey)
        } catch {
            throw PushConfigurationError(message: "the service account's private_key is not an RSA private key PEM (2048 bits or more)")
        }
        account = configuration.serviceAccount
        self.configuration = configuration
        self.now = now
    }

    /// A fresh access token, due for refresh ``FCMConfiguration/accessTokenRefreshMargin``
    /// before it expires.
    ///
    /// - Throws: ``AccessTokenError`` when the endpoint answered with an error; the transport's
    ///   error when it did not answer.
    func fetch() async throws -> BearerTokenCache.Token {
        let issuedAt = now()
        let assertion = try await signAssertion(issuedAt: issuedAt)
        // The assertion is base64url and dots: nothing in it needs percent-encoding.
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: form))

        let (response, responseBody) = try await client.execute(request, host: tokenHost, timeout: configuration.requestTimeout)
        let body = Data(responseBody.readableBytesView)
        let status = Int(response.status.code)
        guard status == 200 else {
            throw AccessTokenError(
                status: status,
                error: (try? WireJSON.decode(OAuthErrorResponse.self, from: body))?.error,
                retryAfter: RetryAfter.parse(response.headers.first(name: "retry-after"), now: now())
            )
        }
        guard let token = try? WireJSON.decode(OAuthTokenResponse.self, from: body), !token.accessToken.isEmpty
        else {
            throw AccessTokenError(status: status, error: "malformed_token_response", retryAfter: nil)
        }
        let lifetime = Double(max(token.expiresIn, 0))
        let margin = Double(configuration.accessTokenRefreshMargin.components.seconds)
        // A token shorter-lived than the margin is still used, for half its life.
        let usable = lifetime > margin * 2 ? lifetime - margin : lifetime / 2
        return .init(value: token.accessToken, refreshAt: issuedAt.addingTimeInterval(usable))
    }

    private func signAssertion(issuedAt: Date) async throws -> String {
        let iat = Date(timeIntervalSince1970: issuedAt.timeIntervalSince1970.rounded(.down))
        let claims = GoogleAssertionClaims(
            iss: IssuerClaim(value: account.clientEmail),
            scope: FCMConfiguration.messagingScope,
            aud: AudienceClaim(value: account.tokenURI),
            iat: IssuedAtClaim(value: iat),
            // Google accepts assertions that live at most an hour.
            exp: ExpirationClaim(value: iat.addingTimeInterval(3600))
        )
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: account.privateKeyID)
        await keys.add(rsa: key, digestAlgorithm: .sha256, kid: kid, serializer: JWTIntegerDates.serializer)
        return try await keys.sign(claims, kid: kid)
    }
}

/// The claims of the assertion a service account presents to Google's token endpoint.
struct GoogleAssertionClaims: JWTPayload {
    var iss: IssuerClaim
    var scope: String
    var aud: AudienceClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim

    /// Google verifies the assertion; the sender has nothing to check.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The token endpoint's success body.
struct OAuthTokenResponse: Codable, Sendable {
    var accessToken: String
    /// Seconds.
    var expiresIn: Int
    var tokenType: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
    }
}

/// The token endpoint's error body (RFC 6749 §5.2): `{"error":"invalid_grant", …}`.
struct OAuthErrorResponse: Codable, Sendable {
    var error: String
    var errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}

/// The token endpoint refused or failed to give an access token.
struct AccessTokenError: Error, Sendable {
    var status: Int
    /// The OAuth `error` code, when the body had one.
    var error: String?
    var retryAfter: Duration?

    /// 429 and 5xx pass; anything else (`invalid_grant`: a revoked or wrong key, a bad clock;
    /// `invalid_client`; a 404 from a wrong token URI) stays broken until an operator acts.
    var outcome: PushOutcome {
        let reason = "oauth_\(error ?? "http_\(status)")"
        switch status {
        case 429, 500...599:
            return PushOutcome(kind: .retry, reason: reason, status: status, retryAfter: retryAfter)
        default:
            return PushOutcome(kind: .permanent, reason: reason, status: status)
        }
    }
}
