import Crypto
import Foundation

extension APNsTestKey {
    /// A provider token as Apple asks for it (ES256, `kid` and `iss`, `iat` an integer), for a
    /// test that speaks to the APNs look-alike without a provider: one that sends what no
    /// provider would, to see the look-alike refuse it.
    public func providerToken(issuedAt: Date) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iat":\#(Int(issuedAt.timeIntervalSince1970.rounded(.down))),"iss":"\#(teamID)"}"#
        let signingInput = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        // JWS wants r and s side by side (64 bytes), which is CryptoKit's raw form.
        let signature = try key.signature(for: Data(signingInput.utf8)).rawRepresentation
        return signingInput + "." + Self.base64URL(signature)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
