import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `herald serve` as a user runs it: the built binary in a child process, on a free loopback
/// port, with a SQLite file in a temporary folder unless told otherwise. Out of process on
/// purpose: a server that hangs its cooperative pool must not take the test runner's down with
/// it, and `kill -9` must be real. The one launcher the tests and the bench share.
public final class HeraldServeProcess: @unchecked Sendable {
    public let folder: URL
    public let port: Int
    /// The database `--database` names: the SQLite file in ``folder`` unless given.
    public let database: String
    public let arguments: [String]
    public let environment: [String: String]?
    public private(set) var process: Process
    private let log: FileHandle
    private let binary: URL

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var logURL: URL { folder.appendingPathComponent("server.log") }

    /// A product (`herald`, `herald-device`) built beside the running test bundle or bench.
    public static func binary(_ name: String = "herald") throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for folder in candidates {
            let binary = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "\(name) not built beside \(candidates)"])
    }

    /// The flags that lift the per-device push allowance: for load and attack tests that push
    /// one or two phones far past it on purpose, to exercise the pipeline rather than the 429.
    public static let liftedTargetLimits = ["--target-pushes-per-minute", "100000000", "--target-push-burst", "100000000"]

    /// Starts the server (without waiting for it: see ``waitUntilHealthy(timeout:)``).
    ///
    /// - Parameters:
    ///   - arguments: Flags after `serve --host --port --database --log-level`.
    ///   - environment: The child's whole environment; nil inherits this process's.
    public init(
        arguments: [String] = [], folder: URL? = nil, database: String? = nil, environment: [String: String]? = nil,
        logLevel: String = "warning", binary: URL? = nil
    ) throws {
        let folder = folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("herald-proc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        self.port = try LoopbackPort.free()
        self.database = database ?? folder.appendingPathComponent("herald.sqlite").path
        self.arguments = ["--log-level", logLevel] + arguments
        self.environment = environment
        self.binary = try binary ?? Self.binary()
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("server.log").path, contents: nil)
        log = try FileHandle(forWritingTo: folder.appendingPathComponent("server.log"))
        process = Process()
        try start()
    }

    /// A server that answered `/health`; throws with the server's log otherwise.
    public static func running(
        arguments: [String] = [], folder: URL? = nil, database: String? = nil, environment: [String: String]? = nil,
        logLevel: String = "warning", binary: URL? = nil
    ) async throws -> HeraldServeProcess {
        let server = try HeraldServeProcess(
            arguments: arguments, folder: folder, database: database, environment: environment, logLevel: logLevel, binary: binary)
        guard await server.waitUntilHealthy() else {
            let tail = server.logTail()
            await server.stop()
            throw HeraldServeProcessFailure("herald serve did not start:\n\(tail)")
        }
        return server
    }

    private func start() throws {
        process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "\(port)", "--database", database] + arguments
        // Inherited, but for the variables other software shares with Herald: on a developer's
        // machine Google's credentials would turn the local development provider the tests expect
        // into FCM, and a proxy would carry the look-alikes' loopback traffic.
        var inherited = ProcessInfo.processInfo.environment
        for variable in ["GOOGLE_APPLICATION_CREDENTIALS", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"] {
            inherited[variable] = nil
        }
        process.environment = environment ?? inherited
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for `/health` to answer 200; false if it did not within `timeout` or the process ended.
    public func waitUntilHealthy(timeout: Duration = .seconds(20)) async -> Bool {
        let health = URL(string: baseURL + "/health")!
        var request = URLRequest(url: health)
        request.timeoutInterval = 1
        return await eventually(timeout: timeout, every: .milliseconds(50)) {
            guard self.process.isRunning else { return true }
            let answer = try? await URLSession.shared.data(for: request)
            return (answer?.1 as? HTTPURLResponse)?.statusCode == 200
        } && process.isRunning
    }

    /// `kill -9`, and waits for the process to be gone.
    public func crash() async {
        kill(process.processIdentifier, SIGKILL)
        // Polled, not `waitUntilExit()`: that would block a cooperative thread.
        _ = await eventually(timeout: .seconds(10), every: .milliseconds(10)) { !self.process.isRunning }
    }

    /// `kill -9`, then a new process on the same database and port.
    public func crashAndRestart() async throws -> Bool {
        await crash()
        try start()
        return await waitUntilHealthy()
    }

    /// A new process on the same database and port, once this one has exited; whether it answered.
    public func restart() async throws -> Bool {
        guard !process.isRunning else { return false }
        try start()
        return await waitUntilHealthy()
    }

    /// SIGTERM, then a new process on the same database and port once it has exited.
    public func terminateAndRestart() async throws -> Bool {
        let exited = await stop()
        try start()
        return await waitUntilHealthy() && exited
    }

    /// SIGTERM; whether the process exited within `timeout`. Killed with -9 after that.
    @discardableResult
    public func stop(within timeout: Duration = .seconds(10)) async -> Bool {
        guard process.isRunning else { return true }
        process.terminate()
        if await eventually(timeout: timeout, every: .milliseconds(20), { !self.process.isRunning }) { return true }
        await crash()
        return false
    }

    /// File descriptors the server holds open now (sockets among them).
    public var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
    }

    /// The last lines the server logged, for a failure message.
    public func logTail(_ lines: Int = 20) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }
}

public struct HeraldServeProcessFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
