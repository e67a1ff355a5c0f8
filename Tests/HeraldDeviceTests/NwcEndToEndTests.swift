import Foundation
import HeraldNostr
import HeraldTestSupport
import HeraldWire
import Testing

/// Nostr Wallet Connect while the phone sleeps, end to end (issue 36): `herald serve`,
/// `herald-device listen` as the wallet, two relay look-alikes, and the test as the app.
@Suite("NWC end to end", .serialized)
struct NwcEndToEndTests {
    static func json(_ line: String?) -> [String: Any] {
        line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
    }

    /// The app's side: a NIP-47 request from `app` to `service`, NIP-44 encrypted.
    static func request(_ method: String, app: NostrSecretKey, service: String) throws -> NostrEvent {
        let key = try NIP44.conversationKey(secret: app, publicKeyHex: service)
        return NostrEvent.signed(
            kind: NwcKind.request, tags: [["p", service], ["encryption", "nip44_v2"]],
            content: try NIP44.encrypt(#"{"method":"\#(method)","params":{}}"#, conversationKey: key),
            createdAt: Int64(Date().timeIntervalSince1970), by: app)
    }

    /// The wallet's answers to `request` the relay received, decrypted.
    static func answers(_ relay: MockNostrRelay, to request: NostrEvent, app: NostrSecretKey) async throws -> [String] {
        try await relay.events.all.compactMap { received -> String? in
            guard let event = try? WireJSON.decode(NostrEvent.self, from: received.event), event.kind == NwcKind.response,
                event.tags(named: "e").contains(where: { $0.first == request.id }), event.isValid
            else { return nil }
            let key = try NIP44.conversationKey(secret: app, publicKeyHex: event.pubkey)
            return try NIP44.decrypt(event.content, conversationKey: key)
        }
    }

    @Test("register with a signed body; a get_balance published to both relays is one nwc_event push; the wallet's answer reaches both relays")
    func getBalance() async throws {
        let certificate = try TestCertificate.make()
        let first = MockNostrRelay(certificate: certificate)
        let second = MockNostrRelay(certificate: certificate)
        let caFile = try certificate.writeCAToTemporaryFile()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-nwc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(atPath: caFile)
        }
        let reach = ["HERALD_TLS_CA_FILE": caFile, "HERALD_NOSTR_ALLOW_PRIVATE_RELAYS": "true"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        for variable in ["GOOGLE_APPLICATION_CREDENTIALS", "HTTPS_PROXY", "https_proxy"] { environment[variable] = nil }
        environment.merge(reach) { $1 }
        let env = environment
        try await first.withRunning { one in
            try await second.withRunning { two in
                let server = try await HeraldServeProcess.running(folder: folder.appendingPathComponent("server"), environment: env)
                defer { Task { await server.stop() } }
                let wallet = folder.appendingPathComponent("phone").path
                let phone = try ChildProcess(
                    arguments: ["listen", "--server", server.baseURL, "--platform", "android", "--wallet", wallet, "--budget", "15"],
                    environment: reach)
                defer { phone.stop() }
                #expect(Self.json(await phone.nextLine(within: .seconds(30)))["event"] as? String == "registered")

                // 1. The wallet registers its NWC connection, signed with its node key.
                let connect = try await ProgramRun.output(
                    try HeraldServeProcess.binary("herald-device"),
                    ["nwc", "connect", "--relay", one.relayURL, "--relay", two.relayURL, "--wallet", wallet], environment: env)
                #expect(connect.status == 0, "\(connect.output)")
                let connected = Self.json(connect.output.split(separator: "\n").last.map(String.init))
                let uriText = try #require(connected["uri"] as? String)
                let uri = try #require(URLComponents(string: uriText))
                let service = try #require(uri.host)
                let secret = try #require(uri.queryItems?.first { $0.name == "secret" }?.value)
                let app = try NostrSecretKey(text: secret)
                _ = try await first.subscriptions.waitFor(count: 1, timeout: .seconds(20))
                _ = try await second.subscriptions.waitFor(count: 1, timeout: .seconds(20))

                // 2. The app asks for the balance on both relays.
                let started = ContinuousClock.now
                let request = try Self.request("get_balance", app: app, service: service)
                await first.publish(Data(request.json.utf8))
                await second.publish(Data(request.json.utf8))

                // 3 and 4. One push, handled; the answer (kind 23195, `e` = the request) on both relays.
                let handled = Self.json(await phone.nextLine(within: .seconds(30)))
                #expect(handled["notification_type"] as? String == "nwc_event", "\(handled)")
                #expect(
                    await eventually(timeout: .seconds(20)) { () async -> Bool in
                        let one = (try? await Self.answers(first, to: request, app: app).count) ?? 0
                        let two = (try? await Self.answers(second, to: request, app: app).count) ?? 0
                        return one >= 1 && two >= 1
                    })
                print("nwc: relay event to the wallet's answer on the relays in \(ContinuousClock.now - started)")
                let answer = Self.json(try await Self.answers(first, to: request, app: app).first)
                #expect(answer["result_type"] as? String == "get_balance")
                #expect((answer["result"] as? [String: Any])?["balance"] as? Int == 0)

                // Exactly one push: a second request's answer arrives, and the first was answered once.
                let info = try Self.request("get_info", app: app, service: service)
                await first.publish(Data(info.json.utf8))
                #expect(Self.json(await phone.nextLine(within: .seconds(30)))["notification_type"] as? String == "nwc_event")
                #expect(
                    await eventually(timeout: .seconds(20)) { () async -> Bool in
                        ((try? await Self.answers(first, to: info, app: app).count) ?? 0) == 1
                    })
                #expect(try await Self.answers(first, to: request, app: app).count == 1)
                #expect(try await Self.answers(second, to: request, app: app).count == 1)
                let infoAnswer = Self.json(try await Self.answers(first, to: info, app: app).first)
                #expect((infoAnswer["result"] as? [String: Any])?["methods"] as? [String] == ["get_info", "get_balance"])
            }
        }
    }
}
