import Foundation
import HeraldTestSupport
import Testing

/// Herald as a bitkit-core app's wake gateway, end to end: `herald serve` with topics, and
/// `herald-device listen --wake-gateway` as the phone (issue 35).
@Suite("Wake gateway end to end", .serialized)
struct WakeGatewayEndToEndTests {
    static let topics = """
        wake_gateway:
          topics:
            blocktank.incomingHtlc:
              urgency: time_sensitive
              deadline_secs: 60
              fallback_after_secs: 2
              alertable: true
              title: Incoming Payment
              body: Open Bitkit now to receive your payment
              description: An HTLC waits for the wallet

        """

    static func lines(_ phone: ChildProcess, until event: String, within timeout: Duration = .seconds(30)) async throws -> [String: Any] {
        while let line = await phone.nextLine(within: timeout) {
            guard let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if json["event"] as? String == event { return json }
            if json["event"] as? String == "fallback" || json["event"] as? String == "unreadable" {
                Issue.record("unexpected line: \(line)")
            }
        }
        throw HeraldServeProcessFailure("no \(event) line")
    }

    @Test("register with an ln: proof, wake by identity, open, ack handled: the fallback is cancelled, never sent")
    func registerWakeOpenAck() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("herald.yaml")
        try Data(Self.topics.utf8).write(to: config)
        let database = folder.appendingPathComponent("herald.sqlite").path
        let key = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--name", "lsp", "--scopes", "wake", "--database", database]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("hk_"))
        let server = try await HeraldServeProcess.running(
            arguments: ["--config", config.path], folder: folder.appendingPathComponent("server"), database: database)
        defer { Task { await server.stop() } }

        let wallet = folder.appendingPathComponent("phone").path
        let phone = try ChildProcess(arguments: ["listen", "--server", server.baseURL, "--wake-gateway", "--wallet", wallet, "--budget", "10"])
        defer { phone.stop() }
        let registered = try await Self.lines(phone, until: "registered")
        let identity = try #require((registered["identities"] as? [String])?.first)
        #expect(identity.hasPrefix("ln:02") || identity.hasPrefix("ln:03"))
        #expect(registered["topics"] as? [String] == ["blocktank.*"])

        let started = ContinuousClock.now
        let woken = try await ZapEndToEndTests.http(
            "POST", server.baseURL + "/api/v1/wake",
            json:
                #"{"identity":"\#(identity)","topic":"blocktank.incomingHtlc","payload":{"paymentHash":"\#(String(repeating: "ab", count: 32))"},"collapse_key":"htlc-1"}"#,
            bearer: key)
        #expect(woken.status == 202, "\(woken.body)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(woken.body.utf8)) as? [String: Any])
        let wakeID = try #require(answer["wake_id"] as? String)
        #expect(answer["devices"] as? Int == 1)

        let wake = try await Self.lines(phone, until: "wake")
        #expect(wake["wake_id"] as? String == wakeID)
        #expect(wake["topic"] as? String == "blocktank.incomingHtlc" && wake["version"] as? Int == 1)
        #expect((wake["payload"] as? String)?.contains(String(repeating: "ab", count: 32)) == true)
        let ack = try await Self.lines(phone, until: "ack")
        #expect(ack["wake_id"] as? String == wakeID && ack["outcome"] as? String == "handled", "\(ack)")
        print("wake gateway: wake to ack through herald serve and herald-device in \(ContinuousClock.now - started)")

        // The fallback's job went with the ack: nothing is left to send.
        let status = try await ZapEndToEndTests.http("GET", server.baseURL + "/api/v1/wake/\(wakeID)", bearer: key)
        let devices = try #require((try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any])?["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(devices.first?["outcome"] as? String == "handled")
        #expect(devices.first?["fallback"] as? String == "cancelled", "\(status.body)")
        #expect(devices.first?["pushed"] as? Bool == true)
    }

    @Test("Herald's own wake of a device shares the rule: the plugin acknowledges it, and the waker reads the ack in its status")
    func ownWakeAcknowledged() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-ownwake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("herald.sqlite").path
        let key = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--name", "lsp", "--scopes", "wake", "--database", database]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try await HeraldServeProcess.running(folder: folder.appendingPathComponent("server"), database: database)
        defer { Task { await server.stop() } }
        let phone = try ChildProcess(arguments: [
            "listen", "--server", server.baseURL, "--platform", "android", "--wallet", folder.appendingPathComponent("phone").path, "--budget", "10",
        ])
        defer { phone.stop() }
        let line = try #require(await phone.nextLine(within: .seconds(30)))
        let device = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["device_id"] as? String)

        let woken = try await ZapEndToEndTests.http(
            "POST", server.baseURL + "/api/v1/wake",
            json: #"{"device":"\#(device)","kind":"incomingHtlc","payment_hash":"\#(String(repeating: "cd", count: 32))"}"#, bearer: key)
        #expect(woken.status == 202, "\(woken.body)")
        let wakeID = try #require((try JSONSerialization.jsonObject(with: Data(woken.body.utf8)) as? [String: Any])?["wake_id"] as? String)
        // `received` as the plugin starts, then `handled`: the later one stays.
        var outcome: String?
        for _ in 0..<100 where outcome != "handled" {
            let status = try await ZapEndToEndTests.http("GET", server.baseURL + "/api/v1/wake/\(wakeID)", bearer: key)
            let devices = (try JSONSerialization.jsonObject(with: Data(status.body.utf8)) as? [String: Any])?["devices"] as? [[String: Any]]
            #expect(devices?.first?["device_id"] as? String == device)
            outcome = devices?.first?["outcome"] as? String
            #expect(outcome == nil || outcome == "received" || outcome == "handled")
            if outcome != "handled" { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(outcome == "handled")
        // The plugin said `received` first, as it started: the server counted both.
        let metrics = try await ZapEndToEndTests.http("GET", server.baseURL + "/metrics").body
        for line in [#"herald_wake_acks_total{outcome="received"} 1"#, #"herald_wake_acks_total{outcome="handled"} 1"#] {
            #expect(metrics.contains(line), "\(line)")
        }
    }
}
