import Foundation
import HeraldTestSupport
import Synchronization
import Testing

/// Several apps in one deployment, as an operator runs it: `herald serve` processes on one
/// PostgreSQL database, a configuration file naming three apps over two APNs keys, and the APNs
/// look-alike trusting both keys, each for its own topics.
@Suite("Several apps in one deployment", .serialized)
struct MultiAppTests {
    static let apps = ["com.example.wallet", "com.example.wallet.beta", "com.other.brand"]

    /// A 64-hex APNs device token, distinct per app and index.
    static func token(app: Int, _ index: Int) -> String {
        String(format: "%02x%062x", app + 1, index)
    }

    /// The APNs look-alike trusting two keys (the wallet's for its topics, the brand's for
    /// `com.other.brand`) and a configuration file declaring `apps` (name, and `extra` settings),
    /// each with its team's key and the look-alike's URL.
    static func withTwoKeys(
        apps: [(name: String, extra: String)], _ body: (MockAPNsServer, _ config: String) async throws -> Void
    ) async throws {
        let certificate = try TestCertificate.make()
        let walletKey = TestKeys.apnsP8(keyID: "WALLETKEY1", teamID: "TEAMWALLET")
        let brandKey = TestKeys.apnsP8(keyID: "BRANDKEY01", teamID: "TEAMBRAND1")
        let mock = MockAPNsServer(
            credentials: [
                .init(key: walletKey, topics: Set(apps.map(\.name).filter { $0 != "com.other.brand" })),
                .init(key: brandKey, topics: ["com.other.brand"]),
            ],
            certificate: certificate
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let caFile = folder.appendingPathComponent("ca.pem").path
        try certificate.writeCA(to: caFile)
        var keyFiles: [String: String] = [:]
        for key in [walletKey, brandKey] {
            let file = folder.appendingPathComponent("AuthKey_\(key.keyID).p8").path
            try key.privateKeyPEM.write(toFile: file, atomically: true, encoding: .utf8)
            keyFiles[key.keyID] = file
        }
        try await mock.withRunning { running in
            let config = folder.appendingPathComponent("herald.yaml").path
            let entries = apps.map { app in
                let key = app.name == "com.other.brand" ? brandKey : walletKey
                return "  \(app.name):\n    apns: { key_file: \(keyFiles[key.keyID]!), key_id: \(key.keyID), team_id: \(key.teamID), "
                    + "topic: \(app.name), url: \"\(running.baseURL)\"\(app.extra) }"
            }
            try (["tls:", "  ca_file: \(caFile)", "apps:"] + entries).joined(separator: "\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            try await body(mock, config)
        }
    }

    @Test("three apps over two keys, two instances: each push has its app's topic and key; one provider token per key")
    func appsAcrossInstances() async throws {
        let apps = [("com.example.wallet", ""), ("com.example.wallet.beta", ", environment: sandbox"), ("com.other.brand", "")]
        try await Self.withTwoKeys(apps: apps) { mock, config in
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let a = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + ["--config", config], database: database.url)
            let b = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + ["--config", config], database: database.url)

            // Registration names the app; an unknown one, or none when no `default` app is
            // configured, is refused before anything is stored.
            var devices: [(app: Int, device: RegisteredDevice)] = []
            for (appIndex, app) in Self.apps.enumerated() {
                for index in 0..<2 {
                    let device = try await RegisteredDevice.register(
                        port: (index == 0 ? a : b).port, platform: "ios", token: Self.token(app: appIndex, index), app: app)
                    devices.append((appIndex, device))
                }
            }
            for body in [#"{"platform":"ios","push_token":"aa","app":"com.unknown"}"#, #"{"platform":"ios","push_token":"aa"}"#] {
                let refused = await RawHTTP.exchange(port: a.port, request: .post("/api/v1/devices", body: Array(body.utf8)), timeout: .seconds(10))
                #expect(refused.statuses.first == 400 && refused.bodies.first?.contains(#""error":"unknown_app""#) == true, "\(refused)")
            }
            let rawUnknown = await RawHTTP.exchange(
                port: b.port, request: .post("/api/v1/notify?platform=ios&token=\(Self.token(app: 0, 9))&app=nope", body: swapWebhook(id: "x")),
                timeout: .seconds(10))
            #expect(rawUnknown.statuses.first == 400 && rawUnknown.bodies.first?.contains("unknown_app") == true, "\(rawUnknown)")

            // Webhooks to every device through both instances at once, and raw tokens naming their app.
            let sent = Mutex(0)
            let jobs = devices.flatMap { entry in (0..<10).map { (entry.device, $0) } }
            await forEach(jobs, width: 16) { device, round in
                let exchange = await RawHTTP.exchange(
                    port: (round.isMultiple(of: 2) ? a : b).port,
                    request: .post(device.webhookPath, body: swapWebhook(id: "\(device.alias)-\(round)")), timeout: .seconds(10))
                if exchange.statuses.first == 200 { sent.withLock { $0 += 1 } }
            }
            let raw = await RawHTTP.exchange(
                port: b.port,
                request: .post("/api/v1/notify?platform=ios&token=\(Self.token(app: 2, 7))&app=com.other.brand", body: swapWebhook(id: "raw")),
                timeout: .seconds(10))
            #expect(raw.statuses.first == 200, "\(raw)")
            #expect(sent.withLock { $0 } == jobs.count)

            let requests = try await mock.requests.waitFor(count: jobs.count + 1, timeout: .seconds(30))
            var byToken: [String: String] = [:]
            for (appIndex, _) in Self.apps.enumerated() {
                for index in [0, 1, 7] { byToken[Self.token(app: appIndex, index)] = Self.apps[appIndex] }
            }
            for request in requests {
                let app = try #require(byToken[request.deviceToken])
                #expect(request.answer == .success, "\(request.answer) for \(app)")
                #expect(request.headers["apns-topic"] == app)
                #expect(request.claims?.keyID == (app == "com.other.brand" ? "BRANDKEY01" : "WALLETKEY1"))
            }
            // Two instances, three apps, two keys: one provider token per key, signed once and
            // shared through the database (a second one would have met TooManyProviderTokenUpdates).
            let tokens = await mock.providerTokens()
            #expect(tokens["WALLETKEY1"]?.count == 1, "\(tokens.mapValues(\.count))")
            #expect(tokens["BRANDKEY01"]?.count == 1, "\(tokens.mapValues(\.count))")
            #expect(Set(requests.compactMap(\.providerToken)).count == 2)

            await b.stop()
            await a.stop()
        }
    }

    @Test("a dead letter of a named app, replayed with herald dead-letters on PostgreSQL, is sent with that app's topic and key")
    func replayKeepsTheApp() async throws {
        try await Self.withTwoKeys(apps: [("com.example.wallet", ""), ("com.other.brand", "")]) { mock, config in
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + ["--config", config], database: database.url)
            let token = Self.token(app: 2, 3)
            let device = try await RegisteredDevice.register(port: server.port, platform: "ios", token: token, app: "com.other.brand")
            // APNs refuses the first push for good: a dead letter.
            await mock.script.enqueue([MockAPNsAnswer(status: 400, reason: "BadPayload")], for: token)
            let sent = await RawHTTP.exchange(
                port: server.port, request: .post(device.webhookPath, body: swapWebhook(id: "dead")), timeout: .seconds(10))
            #expect(sent.statuses.first == 200, "\(sent)")
            _ = try await mock.requests.waitFor(count: 1, timeout: .seconds(20))
            // Replayed by the command line on the same database, through the same configuration file.
            let replayed = try await eventually(timeout: .seconds(10)) {
                let run = try await ProgramRun.output(
                    try ServerProcess.binary(), ["dead-letters", "replay", "--all", "--config", config, "--database", database.url])
                return run.status == 0 && run.output.contains("replayed 1")
            }
            #expect(replayed)
            // The dispatcher finds the replayed job within its safety poll.
            let requests = try await mock.requests.waitFor(count: 2, timeout: .seconds(20))
            for request in requests {
                #expect(request.headers["apns-topic"] == "com.other.brand")
                #expect(request.claims?.keyID == "BRANDKEY01")
            }
            #expect(requests.last?.accepted == true)
            await server.stop()
        }
    }
}
