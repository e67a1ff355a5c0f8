import Foundation
import HeraldTestSupport
import Testing

/// `herald config check` as an operator runs it: the built binary, a YAML file, an exit code.
@Suite("herald config check")
struct ConfigCheckTests {
    func check(_ yaml: String, environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("herald.yaml")
        try yaml.replacingOccurrences(of: "FOLDER", with: folder.path).write(to: file, atomically: true, encoding: .utf8)
        try "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"
            .write(to: folder.appendingPathComponent("bad.p8"), atomically: true, encoding: .utf8)
        // Only what the test gives: a stray HERALD_* in the runner's environment must not leak in.
        return try await ProgramRun.output(
            try ServerProcess.binary(), ["config", "check", "--config", file.path],
            environment: environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]) { a, _ in a },
            includeStandardError: true
        )
    }

    @Test("a good file passes and is summarised; the variable wins over the file")
    func good() async throws {
        let result = try await check("port: 9000\npublic_url: https://push.example.com\n", environment: ["HERALD_PORT": "9100"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("listen: 127.0.0.1:9100"))
        #expect(result.output.contains("public url: https://push.example.com"))
        #expect(result.output.contains("apps: default: local development provider (ios, android, webpush)"))
        #expect(result.output.contains("configuration ok"))
    }

    @Test("herald webpush keygen writes an owner-only VAPID key whose public half it prints, and config check takes it")
    func webPushKeygen() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("vapid.pem").path
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let made = try await ProgramRun.output(try ServerProcess.binary(), ["webpush", "keygen", "--out", key], environment: environment)
        #expect(made.status == 0, "\(made.output)")
        let publicKey = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Data(base64Encoded: publicKey.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=")?.count == 65)
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Never over an existing key: subscriptions made with it would stop working.
        let again = try await ProgramRun.output(
            try ServerProcess.binary(), ["webpush", "keygen", "--out", key], environment: environment, includeStandardError: true)
        #expect(again.status != 0)
        #expect(again.output.contains("--force"))

        let checked = try await check("webpush:\n  vapid_key_file: \(key)\n  contact: mailto:ops@example.com\n")
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains("webpush: Web Push, contact mailto:ops@example.com"), "\(checked.output)")
    }

    @Test(
        "an unparsable signing key, a half-configured platform or a bad URL fails with a message and exit code 1",
        arguments: [
            ("apns:\n  key_file: FOLDER/bad.p8\n  key_id: K1\n  team_id: T1\n  topic: com.example.wallet\n", "invalid configuration"),
            // The error names where the value came from: the key in the file, not HERALD_APNS_KEY_FILE.
            ("apns:\n  key_file: FOLDER/missing.p8\n  key_id: K1\n  team_id: T1\n  topic: com.example.wallet\n", "apns.key_file in "),
            ("apns:\n  topic: com.example.wallet\n", "set HERALD_APNS_KEY_FILE"),
            ("public_url: not a url\n", "public_url in "),
        ])
    func bad(yaml: String, message: String) async throws {
        let result = try await check(yaml)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains(message), "\(result.output)")
        #expect(!result.output.contains("configuration ok"))
    }
}
