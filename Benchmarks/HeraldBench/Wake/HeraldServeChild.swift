import AsyncHTTPClient
import Foundation
import HeraldTestSupport

/// `herald serve` in a child process, pushing to the bench's APNs look-alike: the fleet talks to
/// the server exactly as phones and an LSP would, over HTTP.
struct HeraldServeChild {
    let process: Process
    let folder: URL
    let baseURL: String
    /// An API key with scope `wake`, put in the database before the server started.
    let wakeKey: String

    /// Starts the server on an already provisioned database and waits for `/health`.
    static func start(
        binary: URL, folder: URL, database: String, wakeKey: String,
        apnsURL: String, key: APNsTestKey, caFile: String, topic: String, client: HTTPClient
    ) async throws -> HeraldServeChild {
        let keyFile = folder.appendingPathComponent("apns.p8")
        try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let port = try LoopbackPort.free()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment["HERALD_APNS_KEY_FILE"] = keyFile.path
        environment["HERALD_APNS_KEY_ID"] = key.keyID
        environment["HERALD_APNS_TEAM_ID"] = key.teamID
        environment["HERALD_APNS_TOPIC"] = topic
        environment["HERALD_APNS_URL"] = apnsURL
        environment["HERALD_TLS_CA_FILE"] = caFile
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "\(port)", "--database", database, "--log-level", "error"]
        process.environment = environment
        let log = folder.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let child = HeraldServeChild(process: process, folder: folder, baseURL: "http://127.0.0.1:\(port)", wakeKey: wakeKey)
        let end = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < end, process.isRunning {
            if let response = try? await client.execute(HTTPClientRequest(url: child.baseURL + "/health"), timeout: .seconds(1)),
                response.status == .ok
            {
                return child
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let tail = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        await child.stop()
        throw WakeBenchFailure("herald serve did not start:\n\(tail.suffix(2000))")
    }

    /// SIGTERM, waiting for the exit without blocking a thread (`-9` after ten seconds).
    func stop() async {
        if process.isRunning { process.terminate() }
        let end = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }
}

struct WakeBenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
