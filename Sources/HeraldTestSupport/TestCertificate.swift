import Crypto
import Foundation
import NIOSSL
import X509

/// A throwaway certificate authority and a server certificate it signed for `localhost` and
/// `127.0.0.1`, made at test time (P-256).
///
/// Mock servers present the leaf; clients trust the CA through a PEM file, exactly as a
/// deployment trusts a private CA with `HERALD_TLS_CA_FILE`.
public struct TestCertificate: Sendable {
    /// The CA certificate, PEM.
    public let caCertificatePEM: String
    /// The server certificate, PEM.
    public let leafCertificatePEM: String
    /// The server key, PEM (PKCS#8).
    public let leafPrivateKeyPEM: String

    /// Makes a CA and a leaf valid from an hour ago for `validity`.
    public static func make(
        commonName: String = "Herald Test CA",
        validity: TimeInterval = 7 * 24 * 3600
    ) throws -> TestCertificate {
        let now = Date()
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(validity)

        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName(commonName) }
        let caPublicKey = Certificate.PublicKey(caKey.publicKey)
        let ca = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: caPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: caPublicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        let leafKey = P256.Signing.PrivateKey()
        let leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        let leaf = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafPublicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: caName,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectKeyIdentifier(hash: leafPublicKey)
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(.init(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )

        return TestCertificate(
            caCertificatePEM: try ca.serializeAsPEM().pemString,
            leafCertificatePEM: try leaf.serializeAsPEM().pemString,
            leafPrivateKeyPEM: leafKey.pemRepresentation
        )
    }

    /// Writes the CA certificate to `path`.
    public func writeCA(to path: String) throws {
        try Data(caCertificatePEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Writes the CA certificate to a new file in the temporary directory and returns its path.
    public func writeCAToTemporaryFile() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-test-ca-\(UUID().uuidString).pem").path
        try writeCA(to: path)
        return path
    }

    /// A NIOSSL server configuration presenting the leaf.
    public func serverTLSConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(leafCertificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafPrivateKeyPEM.utf8), format: .pem))
        )
    }

    /// A NIOSSL client configuration trusting only this CA (for tests that talk to a mock directly).
    public func clientTLSConfiguration() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(caCertificatePEM.utf8), format: .pem)])
        return tls
    }
}
