import Foundation
import HeraldTestSupport
import HeraldWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `herald serve` in a child process (the test support's launcher) with the local development
/// provider, an API key with scope `wake`, and plain URLSession calls for what the phone's
/// counterparts (the app registering, the LSP waking it) do. Out of process, so `kill -9` is real.
final class HeraldServe: Sendable {
    let server: HeraldServeProcess
    let wakeKey: String

    var baseURL: URL { URL(string: server.baseURL)! }

    /// Makes the key, starts the server and waits for `/health`.
    static func start() async throws -> HeraldServe {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-presence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = folder.appendingPathComponent("herald.sqlite").path
        let keys = try await run(["keys", "create", "--name", "lsp", "--scopes", "wake", "--database", database])
        let server = try await HeraldServeProcess.running(folder: folder, database: database, logLevel: "error")
        return HeraldServe(server: server, wakeKey: keys.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private init(server: HeraldServeProcess, wakeKey: String) {
        self.server = server
        self.wakeKey = wakeKey
    }

    /// `kill -9`, then a new server on the same database and port.
    func crashAndRestart() async throws {
        guard try await server.crashAndRestart() else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "herald serve did not restart"])
        }
    }

    /// Registers an iOS device, as the app does.
    func registerDevice() async throws -> DeviceRegistrationAnswer {
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let (status, body) = try await call("POST", "/api/v1/devices", json: DeviceRegistrationRequest(platform: "ios", pushToken: token))
        guard status == 201 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "registration: \(status)"]) }
        return try WireJSON.decode(DeviceRegistrationAnswer.self, from: body)
    }

    /// `POST /api/v1/wake` as an LSP: the status and the answer.
    func wake(_ deviceID: String, paymentHash: String) async throws -> (Int, WakeAnswer?) {
        let request = WakeRequest(device: deviceID, kind: .incomingHtlc, paymentHash: paymentHash, amountMsat: 1000)
        let (status, body) = try await call("POST", "/api/v1/wake", bearer: wakeKey, json: request)
        return (status, try? WireJSON.decode(WakeAnswer.self, from: body))
    }

    func call<Body: Encodable>(_ method: String, _ path: String, bearer: String? = nil, json: Body) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + path)!)
        request.httpMethod = method
        request.httpBody = try WireJSON.encode(json)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// Runs `herald` with arguments and returns its standard output, waiting without blocking a thread.
    static func run(_ arguments: [String]) async throws -> String {
        let (status, text) = try await ProgramRun.output(try HeraldServeProcess.binary(), arguments)
        guard status == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "herald \(arguments) exited \(status)"]) }
        return text
    }

}
