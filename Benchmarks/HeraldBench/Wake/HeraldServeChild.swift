import Foundation
import HeraldTestSupport

/// `herald serve` in a child process (the test support's launcher), pushing to the bench's APNs
/// look-alike: the fleet talks to the server exactly as phones and an LSP would, over HTTP.
struct HeraldServeChild {
    let server: HeraldServeProcess
    /// An API key with scope `wake`, put in the database before the server started.
    let wakeKey: String

    var process: Process { server.process }
    var baseURL: String { server.baseURL }

    /// Starts the server on an already provisioned database and waits for `/health`.
    static func start(
        binary: URL, folder: URL, database: String, wakeKey: String,
        apnsURL: String, key: APNsTestKey, caFile: String, topic: String
    ) async throws -> HeraldServeChild {
        let keyFile = folder.appendingPathComponent("apns.p8")
        try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        environment["HERALD_APNS_KEY_FILE"] = keyFile.path
        environment["HERALD_APNS_KEY_ID"] = key.keyID
        environment["HERALD_APNS_TEAM_ID"] = key.teamID
        environment["HERALD_APNS_TOPIC"] = topic
        environment["HERALD_APNS_URL"] = apnsURL
        environment["HERALD_TLS_CA_FILE"] = caFile
        let server = try await HeraldServeProcess.running(
            folder: folder, database: database, environment: environment, logLevel: "error", binary: binary)
        return HeraldServeChild(server: server, wakeKey: wakeKey)
    }

    /// SIGTERM, waiting for the exit without blocking a thread (`-9` after ten seconds).
    func stop() async {
        await server.stop()
    }
}

struct WakeBenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
