import Foundation
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `herald serve` as a user runs it: the built binary in a child process, on a free loopback
/// port, with a SQLite file in a temporary folder. Out of process on purpose: a server that
/// hangs its cooperative pool must not take the test runner's down with it, and `kill -9`
/// must be real.
final class ServerProcess: @unchecked Sendable {
    let folder: URL
    let port: Int
    let extraArguments: [String]
    /// The database `--database` names: the SQLite file in ``folder`` unless given.
    let database: String
    private(set) var process: Process
    private let log: FileHandle

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var logURL: URL { folder.appendingPathComponent("server.log") }

    /// The `herald` binary built beside the test bundle.
    static func binary() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for folder in candidates {
            let binary = folder.appendingPathComponent("herald")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "herald not built beside \(candidates)"])
    }

    /// Starts the server and waits until `/health` answers.
    init(arguments: [String] = [], folder: URL? = nil, database: String? = nil) async throws {
        let folder = folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("herald-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        self.port = try LoopbackPort.free()
        self.extraArguments = arguments
        self.database = database ?? folder.appendingPathComponent("herald.sqlite").path
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("server.log").path, contents: nil)
        log = try FileHandle(forWritingTo: folder.appendingPathComponent("server.log"))
        process = Process()
        try start()
    }

    /// A server that answered `/health`; the test fails with the server's log otherwise.
    static func running(arguments: [String] = [], database: String? = nil) async throws -> ServerProcess {
        let server = try await ServerProcess(arguments: arguments, database: database)
        guard await server.waitUntilHealthy() else { throw HostileFailure("herald serve did not start:\n\(server.logTail())") }
        return server
    }

    private func start() throws {
        process = Process()
        process.executableURL = try Self.binary()
        process.arguments =
            [
                "serve", "--host", "127.0.0.1", "--port", "\(port)",
                "--database", database, "--log-level", "warning",
                // These attacks push one or two phones far past the per-target limit on purpose:
                // lift it, so they exercise the pipeline rather than the 429 path.
                "--target-pushes-per-minute", "100000000", "--target-push-burst", "100000000",
            ] + extraArguments
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for `/health` to answer 200; false if it did not within `timeout`.
    func waitUntilHealthy(timeout: Duration = .seconds(20)) async -> Bool {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if !process.isRunning { return false }
            let exchange = await RawHTTP.exchange(port: port, request: .get("/health"), timeout: .seconds(1))
            if exchange.statuses.first == 200 { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// `kill -9`, and waits for the process to be gone.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// `kill -9`, then a new process on the same database and port.
    func crashAndRestart() async throws -> Bool {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try start()
        return await waitUntilHealthy()
    }

    /// SIGTERM, then a new process on the same database and port once it has exited.
    func terminateAndRestart() async throws -> Bool {
        let exited = await stop()
        try start()
        return await waitUntilHealthy() && exited
    }

    /// SIGTERM; whether the process exited within `timeout`. Killed with -9 after that.
    @discardableResult
    func stop(within timeout: Duration = .seconds(10)) async -> Bool {
        guard process.isRunning else { return true }
        process.terminate()
        let end = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return true
    }

    /// File descriptors the server holds open now (sockets among them).
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
    }

    /// The last lines the server logged, for a failure message.
    func logTail(_ lines: Int = 20) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }
}
