import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL server for tests: `initdb` in a temporary folder, started on a free loopback
/// port with trust authentication, one empty database handed to each test.
///
/// One server per test process, started on first use. A watchdog shell started beside it
/// waits on a pipe this process holds open: when the process ends, however it ends, the pipe
/// closes, and the watchdog stops the server and deletes its folder.
///
/// Under root (here and in CI) the server runs as the `postgres` user, which PostgreSQL
/// insists on. Needs the PostgreSQL 15 binaries (`apt-get install postgresql-15`).
public actor ThrowawayPostgres {
    /// The server every test of this process shares.
    public static let shared = ThrowawayPostgres()

    /// Where the binaries are looked for.
    public static let binaries = "/usr/lib/postgresql/15/bin"

    /// Whether the binaries are installed, so suites can say why they did not run.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: binaries + "/initdb")
    }

    /// One test's database.
    public struct Database: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var user: String
        public var name: String
        /// `postgres://user@host:port/name`, as `herald serve` takes it.
        public var url: String { "postgres://\(user)@\(host):\(port)/\(name)" }
    }

    private struct Server {
        var port: Int
        var folder: URL
        /// The write end of the watchdog's input, never closed: the process's end closes it.
        var watchdogInput: Int32
    }

    private var server: Task<Server, any Error>?
    private var created = 0

    public init() {}

    /// A new empty database on the shared server, starting the server first if needed.
    public func makeDatabase() async throws -> Database {
        let server = try await start()
        created += 1
        let name = "herald_\(ProcessInfo.processInfo.processIdentifier)_\(created)"
        // template0: nothing to copy, the fastest CREATE DATABASE there is.
        try await Self.run(
            "/usr/bin/psql",
            [
                "-X", "-q", "-h", "127.0.0.1", "-p", "\(server.port)", "-U", "postgres", "-d", "postgres",
                "-c", "CREATE DATABASE \(name) TEMPLATE template0",
            ],
            asPostgres: false, log: server.folder.appendingPathComponent("psql-\(created).log")
        )
        return Database(host: "127.0.0.1", port: server.port, user: "postgres", name: name)
    }

    private func start() async throws -> Server {
        if let server { return try await server.value }
        let task = Task { try await Self.launch() }
        server = task
        return try await task.value
    }

    private static func launch() async throws -> Server {
        guard isAvailable else {
            throw ThrowawayPostgresError(message: "no \(binaries)/initdb: install postgresql-15")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if runsAsRoot {
            try await run("/bin/chown", ["postgres:postgres", folder.path], asPostgres: false, log: nil)
        }
        let data = folder.appendingPathComponent("data").path
        try await run(
            binaries + "/initdb",
            ["-D", data, "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"],
            asPostgres: true, log: folder.appendingPathComponent("initdb.log")
        )
        // The port is free now; a race for it makes the start fail loudly, not the tests hang.
        let port = try LoopbackPort.free()
        let options = [
            "-c listen_addresses=127.0.0.1", "-c port=\(port)",
            "-c unix_socket_directories='\(folder.path)'",
            "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
            "-c max_connections=400",
        ].joined(separator: " ")
        let started = folder.appendingPathComponent("started")

        // The watchdog starts the server itself. Started from here, the server would inherit
        // the socket through which Foundation watches for a child's end, and `pg_ctl start`
        // would never look finished; so the watchdog reports the start through a file.
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw ThrowawayPostgresError(message: "pipe failed") }
        // Close-on-exec, so no other child (the server above all) inherits the write end and
        // keeps the pipe open after this process is gone.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let pgCtl = "\(binaries)/pg_ctl -D '\(data)'"
        let script = """
            \(pgCtl) -o "\(options)" -l '\(folder.path)/server.log' -w -t 60 start >'\(folder.path)/pg_ctl.log' 2>&1
            echo $? >'\(started.path)'
            read _
            \(pgCtl) -m immediate stop >/dev/null 2>&1
            rm -rf '\(folder.path)'
            """
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: runsAsRoot ? "/usr/sbin/runuser" : "/bin/sh")
        watchdog.arguments = (runsAsRoot ? ["-u", "postgres", "--", "/bin/sh"] : []) + ["-c", script]
        watchdog.standardInput = FileHandle(fileDescriptor: ends[0], closeOnDealloc: false)
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        close(ends[0])

        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            if let text = try? String(contentsOf: started, encoding: .utf8),
                let status = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                guard status == 0 else {
                    let log =
                        (try? String(contentsOf: folder.appendingPathComponent("pg_ctl.log"), encoding: .utf8))
                        ?? ""
                    throw ThrowawayPostgresError(message: "pg_ctl start exited \(status): \(log)")
                }
                return Server(port: port, folder: folder, watchdogInput: ends[1])
            }
            guard ContinuousClock.now < deadline else {
                throw ThrowawayPostgresError(message: "PostgreSQL did not start")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private static var runsAsRoot: Bool { getuid() == 0 }

    /// Runs a PostgreSQL tool to its end (as the `postgres` user when this process is root).
    private static func run(
        _ path: String, _ arguments: [String], asPostgres: Bool, log: URL?
    )
        async throws
    {
        let (executable, fullArguments) =
            asPostgres && runsAsRoot
            ? (URL(fileURLWithPath: "/usr/sbin/runuser"), ["-u", "postgres", "--", path] + arguments)
            : (URL(fileURLWithPath: path), arguments)
        let output: FileHandle
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            output = try FileHandle(forWritingTo: log)
        } else {
            output = FileHandle.nullDevice
        }
        defer { try? output.close() }
        let status = try await ProgramRun.status(executable, fullArguments, standardOutput: output, standardError: output)
        guard status == 0 else {
            let text = log.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
            throw ThrowawayPostgresError(
                message: "\((path as NSString).lastPathComponent) exited \(status): \(text)")
        }
    }
}

public struct ThrowawayPostgresError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
