import Crypto
import CryptoExtras
import Foundation

/// Key material made at test time, so no secret is ever committed.
public enum TestKeys {
    /// A fresh APNs signing key with made-up ids.
    public static func apnsP8(keyID: String = "TESTKEY123", teamID: String = "TESTTEAM01") -> APNsTestKey {
        let key = P256.Signing.PrivateKey()
        return APNsTestKey(
            privateKeyPEM: key.pemRepresentation,
            publicKeyPEM: key.publicKey.pemRepresentation,
            keyID: keyID,
            teamID: teamID
        )
    }

    /// A fresh service account with a 2048-bit RSA key, pointing at `tokenURI`.
    public static func serviceAccount(
        tokenURI: String,
        projectID: String = "herald-test",
        clientEmail: String = "herald-push@herald-test.iam.gserviceaccount.com"
    ) throws -> TestServiceAccount {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return TestServiceAccount(
            projectID: projectID,
            privateKeyID: UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            privateKeyPEM: key.pkcs8PEMRepresentation,
            publicKeyPEM: key.publicKey.pemRepresentation,
            clientEmail: clientEmail,
            tokenURI: tokenURI
        )
    }
}

/// An APNs `.p8` key as the Apple developer portal would give it, plus the public half a
/// mock APNs verifies with.
public struct APNsTestKey: Sendable, Hashable {
    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the `.p8` format.
    public let privateKeyPEM: String
    public let publicKeyPEM: String
    public let keyID: String
    public let teamID: String
}

/// A Google service account made at test time.
public struct TestServiceAccount: Sendable, Hashable {
    public let projectID: String
    public let privateKeyID: String
    /// PKCS#8 PEM, as in Google's key files.
    public let privateKeyPEM: String
    public let publicKeyPEM: String
    public let clientEmail: String
    public let tokenURI: String

    /// The key file as Google's console downloads it.
    public var json: Data {
        let file: [String: String] = [
            "type": "service_account",
            "project_id": projectID,
            "private_key_id": privateKeyID,
            "private_key": privateKeyPEM,
            "client_email": clientEmail,
            "client_id": "100000000000000000000",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "universe_domain": "googleapis.com",
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A dictionary of strings always encodes.
        return (try? encoder.encode(file)) ?? Data()
    }
}
