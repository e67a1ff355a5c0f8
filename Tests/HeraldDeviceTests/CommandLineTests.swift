import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `herald` as a new user types it (issue 40): bare boolean flags, key files into missing
/// folders, `keys create`'s output, and a typo in the configuration file.
@Suite("The herald command line, as typed", .serialized)
struct CommandLineTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("boolean flags work bare (--flag is true, --no-flag false) as well as with a value")
    func bareFlags() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await HeraldServeProcess.running(
            arguments: ["--webpush-allow-insecure-endpoints", "--no-accept-raw-tokens", "--nostr-allow-private-relays", "true"],
            folder: folder)
        defer { Task { await server.stop() } }
        // Raw tokens are off: a raw token is not a registered alias.
        let raw = try await ZapEndToEndTests.http(
            "POST", "\(server.baseURL)/api/v1/notify?platform=android&token=fcm-raw",
            json: #"{"event":"swap.update","data":{"id":"s","status":"x"}}"#)
        #expect(raw.status == 404, "\(raw.body)")
        // Insecure endpoints are on: an http:// subscription registers.
        let subscription =
            #"{"platform":"webpush","subscription":{"endpoint":"http://push.example/x","keys":{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}}}"#
        let registered = try await ZapEndToEndTests.http("POST", "\(server.baseURL)/api/v1/devices", json: subscription)
        #expect(registered.status == 201, "\(registered.body)")
    }

    @Test("a key file into a folder that does not exist names the folder")
    func missingFolder() async throws {
        for command in [["webpush", "keygen"], ["nostr", "keygen"]] {
            let run = try await ProgramRun.output(
                try HeraldServeProcess.binary(), command + ["--out", "/nonexistent-\(UUID().uuidString.prefix(8))/herald/key.pem"],
                includeStandardError: true)
            #expect(run.status != 0)
            #expect(run.output.contains("does not exist; create it"), "\(run.output)")
            #expect(!run.output.contains("NSCocoaErrorDomain"), "\(run.output)")
        }
    }

    @Test("keys create names the database it wrote to, and its one line of output is the secret")
    func keysCreate() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("herald.sqlite").path
        let both = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--name", "ledger", "--scopes", "events", "--database", database],
            includeStandardError: true)
        #expect(both.status == 0)
        let lines = both.output.split(separator: "\n")
        #expect(lines.first?.contains(database) == true, "\(both.output)")
        #expect(lines.last?.hasPrefix("hk_") == true, "\(both.output)")
        let stdout = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--name", "other", "--scopes", "events", "--database", database])
        #expect(stdout.output.split(separator: "\n").count == 1 && stdout.output.hasPrefix("hk_"))
        // As the docs write it: no --name, the key is named for its scopes.
        let unnamed = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--scopes", "wake,devices", "--database", database], includeStandardError: true)
        #expect(unnamed.status == 0, "\(unnamed.output)")
        #expect(unnamed.output.contains("'devices+wake' with scopes"), "\(unnamed.output)")
    }

    @Test("a port already in use: one line naming the address, the port and the setting, no usage text, a non-zero exit")
    func portInUse() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A listening socket of this process holds the port.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) } }
        #expect(listen(holder, 1) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let run = try await ProgramRun.output(
            try HeraldServeProcess.binary(),
            ["serve", "--port", String(port), "--database", folder.appendingPathComponent("herald.sqlite").path], includeStandardError: true)
        #expect(run.status == 1, "\(run.output)")
        #expect(
            run.output.contains(
                "herald: cannot listen on 127.0.0.1:\(port): the port is already in use; choose another with --port or HERALD_PORT"),
            "\(run.output)")
        #expect(!run.output.contains("Usage:") && !run.output.contains("errno"), "\(run.output)")
    }

    @Test("keys list and dead-letters list where there is no database say so, and make none; keys create makes it")
    func noDatabase() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("herald.sqlite").path
        for arguments in [["keys", "list"], ["dead-letters", "list"]] {
            let run = try await ProgramRun.output(try HeraldServeProcess.binary(), arguments + ["--database", database], includeStandardError: true)
            #expect(run.status != 0, "\(arguments): \(run.output)")
            #expect(run.output.contains("no database at \(database)"), "\(run.output)")
            #expect(!FileManager.default.fileExists(atPath: database))
        }
        let made = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["keys", "create", "--scopes", "devices", "--database", database], includeStandardError: true)
        #expect(made.status == 0, "\(made.output)")
        #expect(FileManager.default.fileExists(atPath: database))
    }

    @Test("config check takes serve's flags and names the flag each came from; a misspelled one is refused with the one meant")
    func configCheckFlags() async throws {
        let run = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["config", "check", "--max-jobs-in-memory", "7", "--registration", "challenge"],
            includeStandardError: true)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("max_jobs_in_memory = 7  [--max-jobs-in-memory]"), "\(run.output)")
        #expect(run.output.contains("registration: challenge"), "\(run.output)")
        // A database password is shown as an ellipsis, never the password, never percent-encoded.
        let redacted = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["config", "check", "--database", "postgres://u:hunter2@127.0.0.1:5432/db"],
            includeStandardError: true)
        #expect(redacted.output.contains("database: postgres://u:…@127.0.0.1:5432/db"), "\(redacted.output)")
        #expect(!redacted.output.contains("hunter2") && !redacted.output.contains("%E2"))
        let typo = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["config", "check", "--max-jobs-in-memroy", "7"], includeStandardError: true)
        #expect(typo.status != 0)
        #expect(typo.output.contains("did you mean '--max-jobs-in-memory'?"), "\(typo.output)")
    }

    @Test("config check refuses a typo in the file, naming the setting meant")
    func typo() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("herald.yaml")
        try Data("jobttl: 5\n".utf8).write(to: file)
        let run = try await ProgramRun.output(
            try HeraldServeProcess.binary(), ["config", "check", "--config", file.path], includeStandardError: true)
        #expect(run.status != 0)
        #expect(run.output.contains("'jobttl': no such setting; did you mean 'job_ttl'?"), "\(run.output)")
    }
}
