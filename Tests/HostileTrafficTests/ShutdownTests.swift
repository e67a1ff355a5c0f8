import Foundation
import HeraldTestSupport
import Testing

/// `herald serve` stops within 5 s of SIGTERM whatever it holds, losing nothing: held callers
/// are answered at once, and sends a hung push service never answers go out after the restart.
@Suite("Shutdown", .serialized)
struct ShutdownTests {
    static let invoiceRequest = Array(#"{"event":"invoice.request","data":{"offer":"lno1","invoiceRequest":"lnr1"}}"#.utf8)

    @Test("held relay requests, presence streams, long polls and idle connections do not hold SIGTERM; the caller gets 503 shutting_down")
    func heldRequests() async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let device = try await RegisteredDevice.register(port: server.port, platform: "ios", token: String(repeating: "ab", count: 32))
        // A presence stream, a long poll of the push feed and an idle keep-alive connection.
        let stream = try await RawConnection.open(port: server.port)
        try await stream.write(
            RawHTTP.Request.get(
                "/api/v1/devices/\(device.id)/presence/stream", headers: ["Authorization: Bearer \(device.secret)"]
            ).bytes)
        let poll = try await RawConnection.open(port: server.port)
        try await poll.write(
            RawHTTP.Request.get(
                "/api/v1/devices/\(device.id)/pushes?after=999&wait=30", headers: ["Authorization: Bearer \(device.secret)"]
            ).bytes)
        let idle = try await RawConnection.open(port: server.port)
        try await idle.write(RawHTTP.Request.get("/health").bytes)
        _ = await idle.read(responses: 1, timeout: .seconds(5))
        // A BOLT12 invoice request held for a phone that never answers (30 s reply timeout).
        async let held = RawHTTP.exchange(
            port: server.port, request: .post(device.webhookPath, body: Self.invoiceRequest), timeout: .seconds(40))
        #expect(await eventually { (try? await device.deliveredPushCount(port: server.port)) == 1 })

        let started = ContinuousClock.now
        let exited = await server.stop(within: .seconds(5))
        #expect(exited, "still running 5 s after SIGTERM:\n\(server.logTail())")
        #expect(ContinuousClock.now - started < .seconds(5))
        let answer = await held
        #expect(answer.statuses == [503], "\(answer)")
        #expect(answer.bodies.first?.contains("shutting_down") == true, "\(answer)")
        for connection in [stream, poll, idle] { connection.close() }
    }

    @Test("a push service that hangs does not hold SIGTERM, and the push it held is sent after the restart")
    func hungPushService() async throws {
        let certificate = try TestCertificate.make()
        let key = TestKeys.apnsP8()
        let topic = "com.example.wallet"
        let mock = MockAPNsServer(key: key, topic: topic, certificate: certificate)
        let token = String(repeating: "9e", count: 32)
        try await mock.withRunning { running in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-hung-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keyFile = folder.appendingPathComponent("apns.p8")
            try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
            environment["HERALD_APNS_KEY_FILE"] = keyFile.path
            environment["HERALD_APNS_KEY_ID"] = key.keyID
            environment["HERALD_APNS_TEAM_ID"] = key.teamID
            environment["HERALD_APNS_TOPIC"] = topic
            environment["HERALD_APNS_URL"] = running.baseURL
            environment["HERALD_TLS_CA_FILE"] = try certificate.writeCAToTemporaryFile()
            let server = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits, folder: folder, environment: environment)
            // APNs takes the first push and never answers it.
            await mock.script.enqueue([.stalled(for: .seconds(120))], for: token)
            let sent = await RawHTTP.exchange(
                port: server.port, request: .post("/api/v1/notify?platform=ios&token=\(token)", body: swapWebhook(id: "hung")),
                timeout: .seconds(10))
            #expect(sent.statuses == [200], "\(sent)")
            _ = try await mock.requests.waitFor(count: 1, timeout: .seconds(20))

            let started = ContinuousClock.now
            let exited = await server.stop(within: .seconds(5))
            #expect(exited, "still running 5 s after SIGTERM:\n\(server.logTail())")
            #expect(ContinuousClock.now - started < .seconds(5))

            // Nothing lost: after the restart the push goes out, and APNs takes it.
            #expect(try await server.restart())
            let requests = try await mock.requests.waitFor(count: 2, timeout: .seconds(20))
            #expect(requests.last?.deviceToken == token && requests.last?.accepted == true)
            await server.stop()
        }
    }
}

extension RegisteredDevice {
    /// How many pushes the local development provider recorded for this device.
    func deliveredPushCount(port: Int) async throws -> Int {
        let exchange = await RawHTTP.exchange(
            port: port, request: .get("/api/v1/devices/\(id)/pushes?after=0", headers: ["Authorization: Bearer \(secret)"]),
            timeout: .seconds(10))
        guard exchange.statuses.first == 200, let text = exchange.bodies.first,
            let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let pushes = json["pushes"] as? [Any]
        else { throw HostileFailure("push feed failed: \(exchange)") }
        return pushes.count
    }
}
