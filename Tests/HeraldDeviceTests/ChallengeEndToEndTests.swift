import Foundation
import HeraldTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `registration: challenge` through `herald serve` and `herald-device listen`: the development
/// phone's plugin answers the challenge by itself, and only then does its alias push.
@Suite("Registration challenge through herald serve and herald-device", .serialized)
struct ChallengeEndToEndTests {
    @Test("a phone's alias pushes once its plugin has posted the challenge code back; an alias made for someone else's token never does")
    func challenge() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-challenge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        for variable in ["HTTPS_PROXY", "https_proxy", "GOOGLE_APPLICATION_CREDENTIALS"] { environment[variable] = nil }
        let server = try await HeraldServeProcess.running(
            arguments: ["--registration", "challenge", "--accept-raw-tokens", "false"], folder: folder.appendingPathComponent("server"),
            environment: environment)
        defer { Task { await server.stop() } }
        let base = server.baseURL

        // Someone registers a token of their choosing: the alias is made and stays silent.
        let squatted = try await ZapEndToEndTests.http(
            "POST", "\(base)/api/v1/devices", json: #"{"platform":"android","push_token":"fcm-someone-elses-token"}"#)
        #expect(squatted.status == 201)
        let squattedURL = try #require(
            (try JSONSerialization.jsonObject(with: Data(squatted.body.utf8)) as? [String: Any])?["webhook_url"] as? String)

        let phone = try ChildProcess(arguments: [
            "listen", "--server", base, "--platform", "android", "--wallet", folder.appendingPathComponent("phone").path,
        ])
        defer { phone.stop() }
        let registered = try #require(await phone.nextLine(within: .seconds(30)))
        let webhookURL = try #require((try JSONSerialization.jsonObject(with: Data(registered.utf8)) as? [String: Any])?["webhook_url"] as? String)

        let swap = #"{"event":"swap.update","data":{"id":"swap-1","status":"transaction.mempool"}}"#
        var status = 0
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(20) {
            status = try await ZapEndToEndTests.http("POST", webhookURL, json: swap).status
            if status == 200 { break }
            #expect(status == 403)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(status == 200, "the phone's alias still refused after 20 s")
        print("challenge: the phone's alias pushed \(ContinuousClock.now - started) after registration")
        let squattedAnswer = try await ZapEndToEndTests.http("POST", squattedURL, json: swap)
        #expect(squattedAnswer.status == 403)
        #expect(squattedAnswer.body.contains("device_unconfirmed"))
    }
}
