import Foundation
import HeraldServer
import HeraldTestSupport
import Testing

@Suite("Provider settings from the environment")
struct ProviderSettingsTests {
    @Test("no push settings means the local development provider")
    func local() throws {
        let settings = try ProviderSettings(environment: [:])
        #expect(settings.isLocal)
    }

    @Test("a half-configured APNs names every missing variable")
    func partialAPNs() {
        #expect {
            try ProviderSettings(environment: ["HERALD_APNS_KEY_ID": "K", "HERALD_APNS_TOPIC": "org.example"])
        } throws: { error in
            let text = "\(error)"
            return text.contains("HERALD_APNS_KEY_FILE") && text.contains("HERALD_APNS_TEAM_ID")
                && !text.contains("HERALD_APNS_KEY_ID")
        }
    }

    @Test("an FCM URL without a service account is refused")
    func partialFCM() {
        #expect(throws: ProviderSettings.Missing.self) {
            try ProviderSettings(environment: ["HERALD_FCM_URL": "http://127.0.0.1:1"])
        }
    }

    @Test("a complete APNs configuration reads the key file and the custom URL")
    func completeAPNs() throws {
        let key = TestKeys.apnsP8()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("apns-\(UUID().uuidString).p8")
        try key.privateKeyPEM.write(to: file, atomically: true, encoding: .utf8)
        let settings = try ProviderSettings(environment: [
            "HERALD_APNS_KEY_FILE": file.path, "HERALD_APNS_KEY_ID": key.keyID, "HERALD_APNS_TEAM_ID": key.teamID,
            "HERALD_APNS_TOPIC": "org.example", "HERALD_APNS_URL": "https://127.0.0.1:4443",
        ])
        #expect(settings.isLocal == false)
        #expect(settings.apns?.topic == "org.example")
        #expect(settings.apns?.environment == .custom("https://127.0.0.1:4443"))
        #expect(settings.fcm == nil)
    }

    @Test("an unreadable key file is an error naming the variable")
    func unreadableKey() {
        #expect {
            try ProviderSettings(environment: [
                "HERALD_APNS_KEY_FILE": "/nonexistent/key.p8", "HERALD_APNS_KEY_ID": "K",
                "HERALD_APNS_TEAM_ID": "T", "HERALD_APNS_TOPIC": "org.example",
            ])
        } throws: { "\($0)".contains("HERALD_APNS_KEY_FILE") }
    }
}
