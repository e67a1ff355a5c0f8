import Crypto
import Foundation
import HeraldPush
import HeraldWire
import Testing

/// VAPID (RFC 8292): the header a push service checks, verified here with the public key alone.
@Suite("VAPID")
struct VAPIDSignerTests {
    @Test("the header is `vapid t=<ES256 JWT>, k=<key>`: signed by the key, aud the endpoint's origin, exp within 24 h, sub the contact")
    func header() async throws {
        let pem = VAPIDSigner.makeKeyPEM()
        let signer = try VAPIDSigner(privateKeyPEM: pem, contact: "mailto:ops@wallet.example")
        let now = Date(timeIntervalSince1970: 1_800_000_000.7)
        let value = try await signer.authorization(for: URL(string: "https://push.example.net:8443/wpush/v2/abc?x=1")!, now: now)

        let parts = value.split(separator: " ")
        #expect(parts.count == 3 && parts[0] == "vapid")
        #expect(parts[1].hasPrefix("t=") && parts[1].hasSuffix(","))
        let token = parts[1].dropFirst(2).dropLast()
        #expect(parts[2] == "k=" + signer.publicKey)
        let keyBytes = try #require(Data(base64URL: signer.publicKey))
        let publicKey = try P256.Signing.PublicKey(x963Representation: keyBytes)
        #expect(publicKey.x963Representation == (try P256.Signing.PrivateKey(pemRepresentation: pem)).publicKey.x963Representation)

        let segments = token.split(separator: ".")
        #expect(segments.count == 3)
        let signatureBytes = try #require(Data(base64URL: segments[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(publicKey.isValidSignature(signature, for: Data("\(segments[0]).\(segments[1])".utf8)))

        let headerBytes = try #require(Data(base64URL: segments[0]))
        let header = try #require(JSONSerialization.jsonObject(with: headerBytes) as? [String: Any])
        #expect(header["alg"] as? String == "ES256" && header["typ"] as? String == "JWT")
        let claimBytes = try #require(Data(base64URL: segments[1]))
        let claims = try #require(JSONSerialization.jsonObject(with: claimBytes) as? [String: Any])
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["sub"] as? String == "mailto:ops@wallet.example")
        #expect(claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
    }

    @Test("one header per origin for the first half of its token's life, then a fresh one; each origin its own")
    func reuse() async throws {
        let signer = try VAPIDSigner(privateKeyPEM: VAPIDSigner.makeKeyPEM(), contact: "https://wallet.example/contact")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let endpoint = URL(string: "https://push.example.net/wpush/v2/a")!
        let first = try await signer.authorization(for: endpoint, now: now)
        #expect(try await signer.authorization(for: URL(string: "https://push.example.net/wpush/v2/b")!, now: now + 5 * 3600) == first)
        let other = try await signer.authorization(for: URL(string: "https://fcm.googleapis.com/wp/x")!, now: now)
        #expect(other != first)
        #expect(try await signer.authorization(for: endpoint, now: now + 6 * 3600 + 1) != first)
    }

    @Test("origins chosen by registrations cannot grow the header cache: past 1,024 it starts over")
    func boundedCache() async throws {
        let signer = try VAPIDSigner(privateKeyPEM: VAPIDSigner.makeKeyPEM(), contact: "mailto:ops@wallet.example")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func origin(_ n: Int) -> URL { URL(string: "https://push\(n).example/x")! }
        let first = try await signer.authorization(for: origin(0), now: now)
        for n in 1..<1_024 { _ = try await signer.authorization(for: origin(n), now: now) }
        #expect(try await signer.authorization(for: origin(0), now: now + 1) == first)
        _ = try await signer.authorization(for: origin(1_024), now: now)
        #expect(try await signer.authorization(for: origin(0), now: now + 1) != first)
    }

    @Test("a contact that is not mailto: or https:, a lifetime past 24 h, a key that is not P-256 PEM: refused, no key in the message")
    func refusals() throws {
        let pem = VAPIDSigner.makeKeyPEM()
        #expect(throws: PushConfigurationError.self) { try VAPIDSigner(privateKeyPEM: pem, contact: "ops@wallet.example") }
        #expect(throws: PushConfigurationError.self) {
            try VAPIDSigner(privateKeyPEM: pem, contact: "mailto:ops@wallet.example", lifetime: 24 * 3600 + 1)
        }
        let secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ5dGVzLW5vdC1hLWtleQ==\n-----END PRIVATE KEY-----\n"
        do {
            _ = try VAPIDSigner(privateKeyPEM: secret, contact: "mailto:ops@wallet.example")
            Issue.record("accepted a key that is not one")
        } catch {
            #expect(!error.description.contains("c2VjcmV0"))
        }
    }
}
