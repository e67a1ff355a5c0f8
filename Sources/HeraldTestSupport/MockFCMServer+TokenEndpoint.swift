import Foundation
import Hummingbird
import JWTKit

/// The mock's Google OAuth2 token endpoint (`POST /token`, the JWT-bearer grant).
extension MockFCMServer {
    private struct TokenForm: Decodable {
        var grantType: String?
        var assertion: String?
        enum CodingKeys: String, CodingKey {
            case grantType = "grant_type"
            case assertion
        }
    }

    func issueToken(_ request: Request) async throws -> Response {
        let text = String(buffer: try await request.body.collect(upTo: 64 * 1024))
        let form = (try? URLEncodedFormDecoder().decode(TokenForm.self, from: text)) ?? TokenForm()
        var record = MockOAuthRequest(grantType: form.grantType, arrival: Date())

        let refusal: MockOAuthAnswer?
        if form.grantType != Self.jwtBearerGrant {
            refusal = MockOAuthAnswer(status: 400, error: "unsupported_grant_type", description: "Invalid grant_type.")
        } else if let assertion = form.assertion, let claims = await verifyAssertion(assertion) {
            record.assertion = claims
            if let scripted = await tokenScript.next(for: claims.issuer) {
                refusal = scripted
            } else {
                refusal = await check(claims)
            }
        } else {
            refusal = .invalidGrant
        }
        if let refusal {
            record.error = refusal.error
            await tokenRequests.append(record)
            var body = ["error": refusal.error]
            body["error_description"] = refusal.description
            return Self.json(body, status: refusal.status)
        }
        let token = "ya29.mock-\(UUID().uuidString.lowercased())"
        await state.issue(token, expiresAt: now().addingTimeInterval(3600))
        record.issuedToken = token
        await tokenRequests.append(record)
        return Self.json(TokenResponse(accessToken: token, expiresIn: 3600, tokenType: "Bearer"), status: 200)
    }

    private struct TokenResponse: Encodable {
        var accessToken: String
        var expiresIn: Int
        var tokenType: String
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
            case tokenType = "token_type"
        }
    }

    /// Google's own rules for a service-account assertion.
    private func check(_ claims: MockOAuthRequest.Assertion) async -> MockOAuthAnswer? {
        let invalid = { (description: String) in
            MockOAuthAnswer(status: 400, error: "invalid_grant", description: description)
        }
        guard claims.algorithm == "RS256" else { return invalid("Invalid JWT: algorithm must be RS256.") }
        guard claims.audience == "\(await state.tokenBaseURL ?? "")/token" else { return invalid("Invalid JWT: audience.") }
        guard claims.scope.split(separator: " ").contains(Substring(Self.messagingScope)) else {
            return MockOAuthAnswer(status: 400, error: "invalid_scope", description: "Invalid OAuth scope.")
        }
        let now = Int(now().timeIntervalSince1970)
        guard claims.expiresAt > claims.issuedAt, claims.expiresAt - claims.issuedAt <= 3600,
            abs(claims.issuedAt - now) <= 300, claims.expiresAt > now
        else {
            return invalid("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
        }
        return nil
    }

    private struct RawAssertion: Decodable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    private struct AssertionClaims: JWTPayload {
        var iss: IssuerClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func verifyAssertion(_ assertion: String) async -> MockOAuthRequest.Assertion? {
        guard let segments = JWTSegments.decode(assertion),
            let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: segments.header),
            let raw = try? JSONDecoder().decode(RawAssertion.self, from: segments.payload),
            let account = await state.account(raw.iss), header.kid == account.privateKeyID,
            let publicKey = try? Insecure.RSA.PublicKey(pem: account.publicKeyPEM)
        else { return nil }
        let keys = JWTKeyCollection()
        await keys.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyID))
        guard (try? await keys.verify(assertion, as: AssertionClaims.self)) != nil else { return nil }
        return .init(
            algorithm: header.alg ?? "",
            keyID: header.kid ?? "",
            issuer: raw.iss,
            scope: raw.scope,
            audience: raw.aud,
            issuedAt: raw.iat,
            expiresAt: raw.exp
        )
    }
}

/// The mock's accounts and the access tokens it issued.
actor MockGoogleState {
    private(set) var baseURL: String?
    /// Where `/token` is served: the same server, or an HTTP/1.1-only one of its own.
    private var separateTokenBaseURL: String?
    var tokenBaseURL: String? { separateTokenBaseURL ?? baseURL }
    private var accounts: [String: TestServiceAccount] = [:]
    private var issued: [String: Date] = [:]
    private(set) var issuedCount = 0

    func setBaseURL(_ url: String) { baseURL = url }
    func setTokenBaseURL(_ url: String) { separateTokenBaseURL = url }
    func trust(_ account: TestServiceAccount) { accounts[account.clientEmail] = account }
    func account(_ email: String) -> TestServiceAccount? { accounts[email] }

    func issue(_ token: String, expiresAt: Date) {
        issued[token] = expiresAt
        issuedCount += 1
    }

    func isValid(_ token: String, at now: Date) -> Bool {
        guard let expiry = issued[token] else { return false }
        return now < expiry
    }

    func revokeAll() { issued.removeAll() }
}
