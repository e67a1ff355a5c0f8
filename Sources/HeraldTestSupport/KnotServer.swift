import Foundation
import HeraldDNS
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real authoritative DNS server, Knot DNS from Debian (`apt-get install knot`), on 127.0.0.1:
/// one zone, signed inline with Knot's default DNSSEC policy, that takes RFC 2136 UPDATEs signed
/// with a TSIG key made for this server alone (a random secret each run).
///
/// Everything lives in a temporary folder: `knot.conf`, the zone file, Knot's databases (the
/// journal, and the KASP database holding the DNSSEC keys it generates on first start). It can
/// be stopped and started again on the same port and folder, keeping what was published.
///
/// Beside `knotd` runs a watchdog shell that waits on a pipe this process holds open: when the
/// pipe closes, on ``pause()`` or at this process's end however it ends, the watchdog stops the
/// server with `knotc stop`, so no server outlives a crashed test run.
public final class KnotServer: Sendable {
    public static let binary = "/usr/sbin/knotd"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    public let port: Int
    public let folder: URL
    /// The zone, without a trailing dot: `_bitcoin-payment.example.com`.
    public let zone: String
    public let keyName: String
    /// `hmac-sha256` or `hmac-sha512`.
    public let keyAlgorithm: String
    public let keySecret: [UInt8]

    private struct Running {
        var knotd: Process
        var log: FileHandle
        var watchdog: Process
        /// The write end of the watchdog's input: closing it stops `knotd`.
        var stopLine: Int32
    }
    private let running = NIOLockedValueBox<Running?>(nil)

    /// `127.0.0.1:<port>`, as ``DNSServerAddress`` parses it.
    public var address: DNSServerAddress { DNSServerAddress(host: "127.0.0.1", port: port) }
    /// The key as BIND's `tsig-keygen` writes it.
    public var keyFileText: String {
        """
        key "\(keyName)" {
        \talgorithm \(keyAlgorithm);
        \tsecret "\(Data(keySecret).base64EncodedString())";
        };

        """
    }
    /// ``keyFileText`` on disk.
    public var keyFile: URL { folder.appendingPathComponent("herald.key") }
    public var logFile: URL { folder.appendingPathComponent("knotd.log") }
    /// What `knotd` logged so far, every start included.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private init(port: Int, folder: URL, zone: String, keyName: String, keyAlgorithm: String, keySecret: [UInt8]) {
        self.port = port
        self.folder = folder
        self.zone = zone
        self.keyName = keyName
        self.keyAlgorithm = keyAlgorithm
        self.keySecret = keySecret
    }

    /// Writes the configuration, zone and key file and starts `knotd`; returns once the zone
    /// answers signed (an RRSIG over its SOA), so the first UPDATE meets a ready server.
    public static func start(
        zone: String = "_bitcoin-payment.example.com", keyName: String = "herald-test", keyAlgorithm: String = "hmac-sha256"
    ) async throws -> KnotServer {
        guard isAvailable else { throw KnotServerError(message: "no \(binary): apt-get install knot") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-knot-\(UUID().uuidString)")
        // Knot creates its databases but not the folder that holds them.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("db"), withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let server = KnotServer(
            port: try LoopbackPort.free(), folder: folder, zone: zone, keyName: keyName, keyAlgorithm: keyAlgorithm, keySecret: secret)
        try server.writeFiles()
        do {
            try await server.resume()
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    private func writeFiles() throws {
        let zoneFile = """
            $ORIGIN \(zone).
            $TTL 300
            @ SOA ns.example.com. hostmaster.example.com. 1 3600 600 86400 300
            @ NS ns.example.com.

            """
        try zoneFile.write(to: folder.appendingPathComponent("zone.db"), atomically: true, encoding: .utf8)
        // One worker of each kind: the machines that run the tests have few cores. The databases
        // are memory maps, sized down from Knot's gigabytes to what a test zone needs.
        let configuration = """
            server:
                rundir: "\(folder.path)"
                listen: 127.0.0.1@\(port)
                udp-workers: 1
                tcp-workers: 1
                background-workers: 1
            database:
                storage: "\(folder.path)/db"
                journal-db-max-size: 64M
                kasp-db-max-size: 16M
                timer-db-max-size: 16M
                catalog-db-max-size: 16M
            control:
                listen: "\(folder.path)/knot.sock"
            log:
              - target: stderr
                any: info
            key:
              - id: \(keyName)
                algorithm: \(keyAlgorithm)
                secret: \(Data(keySecret).base64EncodedString())
            acl:
              - id: herald_update
                key: \(keyName)
                action: update
            zone:
              - domain: \(zone)
                file: "\(folder.path)/zone.db"
                dnssec-signing: on
                acl: herald_update

            """
        try configuration.write(to: folder.appendingPathComponent("knot.conf"), atomically: true, encoding: .utf8)
        try keyFileText.write(to: keyFile, atomically: true, encoding: .utf8)
    }

    /// Starts `knotd` (again) on its port and folder; returns once the zone answers signed.
    public func resume() async throws {
        let configuration = folder.appendingPathComponent("knot.conf").path
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: logFile)
        _ = try? log.seekToEnd()
        let knotd = Process()
        knotd.executableURL = URL(fileURLWithPath: Self.binary)
        knotd.arguments = ["-c", configuration]
        knotd.standardInput = FileHandle.nullDevice
        knotd.standardOutput = log
        knotd.standardError = log
        do {
            try knotd.run()
        } catch {
            try? log.close()
            throw error
        }

        // The watchdog stops `knotd` through its control socket rather than with a signal:
        // children of the test process inherit its blocked signal mask, so SIGTERM would
        // wait forever. Started here and not by the watchdog, `knotd` is this process's
        // child, reaped when it exits.
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            kill(knotd.processIdentifier, SIGKILL)
            throw KnotServerError(message: "pipe failed")
        }
        // Close-on-exec, so no other child holds the write end open.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "read _; exec \(Self.control) -c '\(configuration)' stop >/dev/null 2>&1"]
        watchdog.standardInput = FileHandle(fileDescriptor: ends[0], closeOnDealloc: false)
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        do {
            try watchdog.run()
        } catch {
            close(ends[0])
            close(ends[1])
            kill(knotd.processIdentifier, SIGKILL)
            throw error
        }
        close(ends[0])
        running.withLockedValue { $0 = Running(knotd: knotd, log: log, watchdog: watchdog, stopLine: ends[1]) }

        let apex = try DNSName(zone)
        let client = DNSClient()
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            if let answer = try? await client.query(apex, type: .soa, dnssec: true, server: address, timeout: .seconds(1)),
                answer.answers.contains(where: { $0.typeCovered == .soa })
            {
                return
            }
            guard knotd.isRunning, ContinuousClock.now < deadline else {
                let exited = !knotd.isRunning
                await pause()
                throw KnotServerError(message: "knotd did not serve a signed \(zone)" + (exited ? " (it exited)" : "") + ":\n\(self.log)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `knotc`, which stops the server through its control socket.
    static let control = "/usr/sbin/knotc"

    /// Stops `knotd` (`knotc stop`, through the watchdog) and waits until it has exited.
    public func pause() async {
        guard
            let current = running.withLockedValue({ state in
                defer { state = nil }
                return state
            })
        else { return }
        close(current.stopLine)
        let deadline = ContinuousClock.now + .seconds(10)
        // Polled, not `waitUntilExit()`: that would block a cooperative thread.
        while current.knotd.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        // SIGKILL, the one signal a blocked mask cannot hold back.
        if current.knotd.isRunning { kill(current.knotd.processIdentifier, SIGKILL) }
        while current.knotd.isRunning || current.watchdog.isRunning, ContinuousClock.now < deadline + .seconds(5) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        try? current.log.close()
    }

    /// Stops it and deletes its folder.
    /// Runs `body` with a fresh server, stopped afterwards whether `body` threw or not.
    public static func withRunning<Result>(_ body: (KnotServer) async throws -> Result) async throws -> Result {
        let knot = try await start()
        do {
            let result = try await body(knot)
            await knot.stop()
            return result
        } catch {
            await knot.stop()
            throw error
        }
    }

    public func stop() async {
        await pause()
        try? FileManager.default.removeItem(at: folder)
    }
}

public struct KnotServerError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
