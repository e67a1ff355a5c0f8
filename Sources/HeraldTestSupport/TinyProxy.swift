import Foundation
import NIOConcurrencyHelpers

/// A real HTTPS proxy, tinyproxy from Debian, on 127.0.0.1: what a deployment's egress goes
/// through. Its log records each `CONNECT`; it can be stopped and started again on its port to
/// see jobs wait for it.
public final class TinyProxy: Sendable {
    public static let binary = "/usr/bin/tinyproxy"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    public let port: Int
    public let folder: URL
    /// `user:password` it demands as `Proxy-Authorization: Basic`, if any.
    public let credentials: (user: String, password: String)?
    private let process = NIOLockedValueBox<Process?>(nil)

    public var logFile: URL { folder.appendingPathComponent("tinyproxy.log") }

    private init(port: Int, folder: URL, credentials: (user: String, password: String)?) {
        self.port = port
        self.folder = folder
        self.credentials = credentials
    }

    /// Writes a configuration and starts the proxy; returns once it takes connections.
    public static func start(credentials: (user: String, password: String)? = nil) async throws -> TinyProxy {
        guard isAvailable else { throw TinyProxyError(message: "no \(binary): apt-get install tinyproxy") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // tinyproxy drops to `nobody` when started as root: it must be able to write its log.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let proxy = TinyProxy(port: try LoopbackPort.free(), folder: folder, credentials: credentials)
        try await proxy.resume()
        return proxy
    }

    /// Starts it (again) on its port.
    public func resume() async throws {
        var lines = [
            "Port \(port)", "Listen 127.0.0.1", "Timeout 60", "MaxClients 200",
            "LogFile \"\(logFile.path)\"", "LogLevel Connect", "Allow 127.0.0.1",
            // No ConnectPort line: CONNECT to any port (the look-alikes listen on free ones).
        ]
        if getuid() == 0 { lines += ["User nobody", "Group nogroup"] }
        if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
        let configuration = folder.appendingPathComponent("tinyproxy.conf")
        try (lines.joined(separator: "\n") + "\n").write(to: configuration, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-d", "-c", configuration.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process.withLockedValue { $0 = process }
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw TinyProxyError(message: "tinyproxy did not start: \(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops it; connections through it break.
    public func pause() async {
        guard let process = self.process.withLockedValue({ $0 }) else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while Self.accepts(port: port), ContinuousClock.now < deadline + .seconds(5) { try? await Task.sleep(for: .milliseconds(20)) }
        self.process.withLockedValue { $0 = nil }
    }

    public func stop() async {
        await pause()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The log so far.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The targets of the `CONNECT`s it logged (`127.0.0.1:8443`), in order.
    public var connects: [String] {
        log.split(separator: "\n").compactMap { line in
            // "CONNECT   Nov 25 09:41:18.335 [26616]: Request (file descriptor 5): CONNECT 127.0.0.1:1 HTTP/1.1"
            guard line.contains("Request ("), let range = line.range(of: "CONNECT ", options: .backwards) else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }

    private static func accepts(port: Int) -> Bool {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

public struct TinyProxyError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
