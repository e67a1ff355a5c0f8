import Foundation
import HeraldTestSupport
import Testing

/// `herald-device listen` as docs/phone.md uses it (issue 40): it shows and keeps the token it
/// registered, sets an LSP with `lsp set`, and handles pushes side by side.
@Suite("herald-device listen and lsp", .serialized)
struct ListenTests {
    /// A folder of its own and `herald serve` in it, with no proxy, push credentials or API key
    /// of this machine's environment.
    static func server(arguments: [String] = []) async throws -> (URL, HeraldServeProcess) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-listen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        for variable in ["HTTPS_PROXY", "https_proxy", "GOOGLE_APPLICATION_CREDENTIALS", "HERALD_API_KEY"] { environment[variable] = nil }
        let server = try await HeraldServeProcess.running(
            arguments: arguments, folder: folder.appendingPathComponent("server"), environment: environment)
        return (folder, server)
    }

    static func finish(_ folder: URL, _ server: HeraldServeProcess) {
        Task {
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test("listen shows and keeps its push token; lsp set sets the LSP node id; a stuck swap does not hold up an invoice request behind it")
    func listen() async throws {
        let (folder, server) = try await Self.server()
        defer { Self.finish(folder, server) }
        let wallet = folder.appendingPathComponent("phone").path
        let phone = try ChildProcess(arguments: ["listen", "--server", server.baseURL, "--platform", "ios", "--wallet", wallet, "--budget", "20"])
        defer { phone.stop() }
        let line = try #require(await phone.nextLine(within: .seconds(30)))
        let registered = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let token = try #require(registered["push_token"] as? String)
        #expect(token.count == 64 && registered["platform"] as? String == "ios")
        let kept = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: wallet).appendingPathComponent("registration.json")))
                as? [String: Any])
        #expect(kept["push_token"] as? String == token)

        let node = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        let set = try await ProgramRun.output(try HeraldServeProcess.binary("herald-device"), ["lsp", "set", node, "--wallet", wallet])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains(node), "\(set.output)")

        // A swap the development wallet does not know keeps its push busy to the deadline; an
        // invoice request behind it is answered meanwhile.
        let webhook = try #require(registered["webhook_url"] as? String)
        let stuck = try await ZapEndToEndTests.http(
            "POST", webhook, json: #"{"event":"swap.update","data":{"id":"unknown-swap","status":"transaction.mempool"}}"#)
        #expect(stuck.status == 200)
        // Its push is in the phone's feed (the long poll answers once it is): the phone takes it
        // up ahead of anything sent after it.
        let deviceID = try #require(registered["device_id"] as? String)
        let secret = try #require(kept["device_secret"] as? String)
        let feed = try await ZapEndToEndTests.http("GET", "\(server.baseURL)/api/v1/devices/\(deviceID)/pushes?after=0&wait=20", bearer: secret)
        #expect(feed.status == 200 && feed.body.contains("swap_updated"), "\(feed.body)")
        let started = ContinuousClock.now
        let invoice = try await ZapEndToEndTests.http(
            "POST", webhook, json: #"{"event":"invoice.request","data":{"offer":"lno1example","invoiceRequest":"lnr1example"}}"#)
        let took = ContinuousClock.now - started
        print("listen: an invoice request behind a stuck swap answered in \(took)")
        #expect(invoice.status == 200, "\(invoice.body)")
        #expect(took < .seconds(10))
    }

    @Test("against a server in registration: key, listen registers with --api-key (or HERALD_API_KEY) and not without")
    func apiKey() async throws {
        let (folder, server) = try await Self.server(arguments: ["--registration", "key"])
        defer { Self.finish(folder, server) }
        let created = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--scopes", "devices", "--database", server.database])
        let key = try #require(created.output.split(whereSeparator: \.isWhitespace).map(String.init).first { $0.hasPrefix("hk_") })
        let refused = try ChildProcess(
            arguments: ["listen", "--server", server.baseURL, "--platform", "android", "--wallet", folder.appendingPathComponent("a").path],
            mergingStandardError: true)
        defer { refused.stop() }
        let answer = try #require(await refused.nextLine(within: .seconds(30)))
        #expect(answer.contains("401"), "\(answer)")
        for (arguments, variables) in [(["--api-key", key], [String: String]()), ([], ["HERALD_API_KEY": key])] {
            let phone = try ChildProcess(
                arguments: [
                    "listen", "--server", server.baseURL, "--platform", "android", "--wallet", folder.appendingPathComponent(UUID().uuidString).path,
                ]
                    + arguments,
                environment: variables)
            defer { phone.stop() }
            let line = try #require(await phone.nextLine(within: .seconds(30)))
            #expect(line.contains(#""event":"registered""#), "\(line)")
        }
        // The wake gateway's registration, as a bitkit-core app behind its backend would make it.
        for (arguments, registers) in [([], false), (["--api-key", key], true)] {
            let gateway = try ChildProcess(
                arguments: [
                    "listen", "--server", server.baseURL, "--wake-gateway", "--max-pushes", "0", "--wallet",
                    folder.appendingPathComponent(UUID().uuidString).path,
                ] + arguments, mergingStandardError: true)
            defer { gateway.stop() }
            let line = try #require(await gateway.nextLine(within: .seconds(30)))
            #expect(line.contains(#""event":"registered""#) == registers, "\(arguments): \(line)")
        }
    }

    @Test("a restarted listen goes on from the push it stopped at: a push handled before the restart is not handled again")
    func restart() async throws {
        let (folder, server) = try await Self.server()
        defer { Self.finish(folder, server) }
        let wallet = folder.appendingPathComponent("phone").path
        let arguments = ["listen", "--server", server.baseURL, "--platform", "android", "--wallet", wallet, "--budget", "2", "--max-pushes", "1"]
        let first = try ChildProcess(arguments: arguments, mergingStandardError: true)
        defer { first.stop() }
        let line = try #require(await first.nextLine(within: .seconds(30)))
        let registered = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let webhook = try #require(registered["webhook_url"] as? String)
        #expect(
            try await ZapEndToEndTests.http("POST", webhook, json: #"{"event":"swap.update","data":{"id":"s-1","status":"transaction.mempool"}}"#)
                .status == 200)
        // Said at once, before the swap's budget runs out: what it handles and why it waits.
        let taking = try #require(await first.nextLine(within: .seconds(20)))
        #expect(taking.hasPrefix("herald-device: handling swap_updated (seq "), "\(taking)")
        #expect(taking.contains("not final waits"), "\(taking)")
        let handled = try #require(await first.nextLine(within: .seconds(30)))
        #expect(handled.contains(#""notification_type":"swap_updated""#), "\(handled)")
        first.process.waitUntilExit()

        let second = try ChildProcess(arguments: arguments)
        defer { second.stop() }
        _ = try #require(await second.nextLine(within: .seconds(30)))
        #expect(
            try await ZapEndToEndTests.http(
                "POST", webhook, json: #"{"event":"invoice.request","data":{"offer":"lno1example","invoiceRequest":"lnr1example"}}"#
            ).status == 200)
        // The next push it handles is the new one, not the swap again.
        let next = try #require(await second.nextLine(within: .seconds(30)))
        #expect(!next.contains("swap_updated"), "\(next)")
    }
}
