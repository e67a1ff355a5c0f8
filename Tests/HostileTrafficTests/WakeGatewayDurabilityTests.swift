import Crypto
import Foundation
import HeraldSecp256k1
import HeraldTestSupport
import HeraldWake
import HeraldWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A wake's fallback alert is a job due later in the outbox: it survives `kill -9`, is sent once
/// by two instances on PostgreSQL, and an ack at either instance cancels it (issue 35).
@Suite("Wake gateway fallbacks: durable and sent once", .serialized)
struct WakeGatewayDurabilityTests {
    static let config = """
        wake_gateway:
          topics:
            blocktank.incomingHtlc:
              urgency: time_sensitive
              deadline_secs: 120
              fallback_after_secs: 3
              alertable: true
              title: Incoming Payment
              body: Open Bitkit now to receive your payment

        """

    /// A bitkit-core phone: keys, secret, install id, APNs token.
    struct Phone {
        let node = NodeSecretKey.random()
        let encryption = NodeSecretKey.random()
        let secret = WakeDeviceSecret.make()
        let token = (0..<32).map { _ in UInt8.random(in: .min ... .max) }.lowercaseHex
        var identity: String { "ln:" + node.nodeID.hex }

        func registration(audience: String) -> WakeRegistrationRequest {
            var request = WakeRegistrationRequest(
                app: "bitkit", installID: Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncodedString,
                platform: .apns, environment: .production, pushToken: token, encryptionKey: encryption.nodeID.hex,
                secretSHA256: WakeDeviceSecret.sha256(secret), identities: [identity], topics: ["blocktank.*"],
                ts: Int64(Date().timeIntervalSince1970))
            request.proofs = [
                WakeIdentityProof(identity: identity, sig: LightningMessageSignature.sign(request.preimage(audience: audience), with: node))
            ]
            return request
        }
    }

    static func http(_ method: String, _ url: String, body: Data? = nil, bearer: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let bearer { request.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    static func wake(_ server: ServerProcess, _ phone: Phone, key: String) async throws -> String {
        let body = #"{"identity":"\#(phone.identity)","topic":"blocktank.incomingHtlc","payload":{"n":1}}"#
        let answer = try await http("POST", server.baseURL + "/api/v1/wake", body: Data(body.utf8), bearer: key)
        #expect(answer.status == 202, "\(answer)")
        return try #require(answer.json["wake_id"] as? String)
    }

    static func fallback(of wakeID: String, at server: ServerProcess, key: String) async throws -> String? {
        let answer = try await http("GET", server.baseURL + "/api/v1/wake/\(wakeID)", bearer: key)
        return ((answer.json["devices"] as? [[String: Any]])?.first)?["fallback"] as? String
    }

    static func fallbacks(_ requests: [MockAPNsRequest], for wakeID: String) -> Int {
        requests.filter { ($0.json?["wake_fallback"] as? [String: Any])?["id"] as? String == wakeID }.count
    }

    /// The APNs look-alike, a configuration with the topic, and the environment that points
    /// `herald serve` at both.
    static func withAPNs(_ body: (MockAPNsServer, _ environment: [String: String], _ folder: URL) async throws -> Void) async throws {
        let certificate = try TestCertificate.make()
        let key = TestKeys.apnsP8()
        let mock = MockAPNsServer(key: key, topic: "to.bitkit", certificate: certificate)
        try await mock.withRunning { running in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-fallback-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyFile = folder.appendingPathComponent("apns.p8")
            try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
            let config = folder.appendingPathComponent("herald.yaml")
            try Data(Self.config.utf8).write(to: config)
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
            for variable in ["GOOGLE_APPLICATION_CREDENTIALS", "HTTPS_PROXY", "https_proxy"] { environment[variable] = nil }
            environment["HERALD_APNS_KEY_FILE"] = keyFile.path
            environment["HERALD_APNS_KEY_ID"] = key.keyID
            environment["HERALD_APNS_TEAM_ID"] = key.teamID
            environment["HERALD_APNS_TOPIC"] = "to.bitkit"
            environment["HERALD_APNS_URL"] = running.baseURL
            environment["HERALD_TLS_CA_FILE"] = try certificate.writeCAToTemporaryFile()
            environment["HERALD_CONFIG"] = config.path
            environment["HERALD_WAKE_GATEWAY_AUDIENCE"] = "wake.test"
            try await body(mock, environment, folder)
        }
    }

    static func apiKey(database: String, environment: [String: String]) async throws -> String {
        let run = try await ProgramRun.output(
            try ServerProcess.binary(), ["keys", "create", "--name", "lsp", "--scopes", "wake", "--database", database], environment: environment)
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a fallback due across kill -9 is sent once after the restart")
    func fallbackSurvivesKill() async throws {
        try await Self.withAPNs { mock, environment, folder in
            let database = folder.appendingPathComponent("herald.sqlite").path
            let key = try await Self.apiKey(database: database, environment: environment)
            let server = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits, folder: folder.appendingPathComponent("server"), database: database,
                environment: environment)
            let phone = Phone()
            let registered = try await Self.http(
                "POST", server.baseURL + "/wake/v1/devices", body: try WireJSON.encode(phone.registration(audience: "wake.test")))
            #expect(registered.status == 201, "\(registered)")
            let wakeID = try await Self.wake(server, phone, key: key)
            let pushed = try await mock.requests.waitFor(count: 1, timeout: .seconds(20))
            #expect(try WakeEnvelope.open(push: pushed[0].body, with: phone.encryption).id == wakeID)

            // Killed before the fallback is due (3 s after the wake).
            #expect(try await server.crashAndRestart(), "\(server.logTail())")
            // The wake's own push may go out again (its outcome may have died with the process:
            // at least once); the fallback goes out once.
            #expect(await eventually(timeout: .seconds(30)) { Self.fallbacks(await mock.requests.all, for: wakeID) == 1 })
            #expect(await eventually { (try? await Self.fallback(of: wakeID, at: server, key: key)) == "sent" })
            let all = await mock.requests.all
            #expect(Self.fallbacks(all, for: wakeID) == 1)
            await server.stop()
        }
    }

    @Test("two instances on PostgreSQL send a fallback once, an ack at either cancels it, and one takes over when the other is killed")
    func twoInstances() async throws {
        try await Self.withAPNs { mock, environment, folder in
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let key = try await Self.apiKey(database: database.url, environment: environment)
            let lease = ["--lease-seconds", "3"]
            let a = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits + lease, folder: folder.appendingPathComponent("a"), database: database.url,
                environment: environment)
            let b = try await ServerProcess.running(
                arguments: ServerProcess.liftedTargetLimits + lease, folder: folder.appendingPathComponent("b"), database: database.url,
                environment: environment)
            let phone = Phone()
            #expect(
                try await Self.http("POST", a.baseURL + "/wake/v1/devices", body: try WireJSON.encode(phone.registration(audience: "wake.test")))
                    .status == 201)

            // Not acknowledged: one fallback between the two.
            let unanswered = try await Self.wake(a, phone, key: key)
            // Acknowledged at the other instance: cancelled wherever its job waits.
            let answered = try await Self.wake(b, phone, key: key)
            let ack = try await Self.http(
                "POST", a.baseURL + "/wake/v1/acks", body: try WireJSON.encode(WakeAck(id: answered, outcome: .handled)), bearer: phone.secret)
            #expect(ack.status == 204)
            #expect(try await Self.fallback(of: answered, at: b, key: key) == "cancelled")
            #expect(await eventually(timeout: .seconds(30)) { (try? await Self.fallback(of: unanswered, at: b, key: key)) == "sent" })

            // Woken through a, which is killed before the fallback is due: b sends it.
            let orphaned = try await Self.wake(a, phone, key: key)
            _ = try await mock.requests.waitFor(count: 4, timeout: .seconds(20))
            await a.crash()
            #expect(await eventually(timeout: .seconds(30)) { (try? await Self.fallback(of: orphaned, at: b, key: key)) == "sent" })

            let requests = await mock.requests.all
            #expect(Self.fallbacks(requests, for: unanswered) == 1)
            #expect(Self.fallbacks(requests, for: answered) == 0)
            #expect(Self.fallbacks(requests, for: orphaned) == 1)
            await b.stop()
        }
    }
}
