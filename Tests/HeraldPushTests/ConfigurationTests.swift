import Foundation
import HeraldPush
import HeraldTestSupport
import Testing

@Suite("Provider configuration")
struct ConfigurationTests {
    @Test("a Google key file decodes, and its description never shows the private key")
    func serviceAccount() throws {
        let file = try TestKeys.serviceAccount(tokenURI: "https://oauth2.googleapis.com/token")
        let account = try ServiceAccount(json: file.json)
        #expect(account.projectID == file.projectID)
        #expect(account.clientEmail == file.clientEmail)
        #expect(account.privateKeyID == file.privateKeyID)
        #expect(account.privateKey == file.privateKeyPEM)
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(!"\(account)".contains("PRIVATE KEY"))
        #expect(!String(reflecting: account).contains("PRIVATE KEY"))
    }

    @Test("the APNs token refresh interval stays within Apple's 20 to 50 minutes; the key is never described")
    func apnsConfiguration() {
        let key = TestKeys.apnsP8()
        func configuration(refresh minutes: Int) -> APNsConfiguration {
            APNsConfiguration(
                signingKeyPEM: key.privateKeyPEM,
                keyID: key.keyID,
                teamID: key.teamID,
                topic: "com.example.wallet",
                environment: .sandbox,
                tokenRefreshInterval: .seconds(minutes * 60)
            )
        }
        #expect(configuration(refresh: 5).tokenRefreshInterval == .seconds(20 * 60))
        #expect(configuration(refresh: 40).tokenRefreshInterval == .seconds(40 * 60))
        #expect(configuration(refresh: 90).tokenRefreshInterval == .seconds(50 * 60))
        #expect(!"\(configuration(refresh: 40))".contains("PRIVATE KEY"))
        #expect(APNsConfiguration.Environment.production.baseURL == "https://api.push.apple.com")
        #expect(APNsConfiguration.Environment.sandbox.baseURL == "https://api.sandbox.push.apple.com")
        #expect(APNsConfiguration.Environment.custom("https://127.0.0.1:8443/").baseURL == "https://127.0.0.1:8443")
    }

    @Test("a signing key that is not a P-256 PEM fails at start-up, without echoing the key")
    func badKey() async throws {
        let client = try PushHTTPClient()
        let configuration = APNsConfiguration(
            signingKeyPEM: "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----",
            keyID: "K",
            teamID: "T",
            topic: "t",
            environment: .sandbox
        )
        let error = #expect(throws: PushConfigurationError.self) {
            _ = try APNsProvider(configuration: configuration, httpClient: client)
        }
        #expect(error?.message.contains("not a key") == false)
        await client.shutdown()
    }
}
