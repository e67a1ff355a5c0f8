import Foundation
import HeraldStore
import Logging
import PostgresNIO
import ServiceLifecycle

/// The store on PostgreSQL, for several `herald serve` processes on one database.
///
/// Jobs are claimed with `FOR UPDATE SKIP LOCKED` and leased until a time: a process that dies
/// leaves its leased jobs to the others once the lease runs out. Nothing another process could
/// change is cached here: every read goes to the database.
///
/// The connection pool, ``client``, is a `Service`: it must run (in the application's service
/// group, before the services that use the store) for any query to get a connection.
///
/// The use cases are in `PostgresStore+X.swift`, one file per `SQLiteStore+X.swift` with the
/// same use cases, and three of their own: `+Notifications`, `+TargetRates` and `+WakeClaims`,
/// what several processes share (``SharedStoreCapabilities``). ``RequestBatcher`` has no
/// counterpart either: SQLite answers those lookups from memory (its `DeadTokenFilter`).
public final class PostgresStore: Sendable {
    /// The connection pool. Run it for as long as the store is used.
    public let client: PostgresClient
    public let postgres: PostgresLocation
    let logger: Logger
    /// The dead-token checks of webhooks to raw tokens, batched across concurrent webhooks.
    let deadTokenChecks = RequestBatcher<DeadTokenKey, Bool>(absent: false)
    /// Webhooks' pushes taken from their targets' allowances, batched the same way. A key the
    /// query leaves out is refused (it answers every key; this is only a safe default).
    let targetTakes = RequestBatcher<String, TargetTake>(absent: TargetTake(wait: 1))
    /// Delivered outcomes waiting to ride on this process's next intake statement; nil to write
    /// each batch at once.
    let heldOutcomes: HeldOutcomes?

    /// - Parameters:
    ///   - maximumConnections: Connections the pool opens at most. Each `herald serve` needs
    ///     few: the intake's and the dispatcher's batches, plus reads from the routes.
    ///   - outcomeLinger: How long a batch of delivered outcomes waits for the next intake
    ///     statement to carry it before it is written alone (``HeldOutcomes``); zero writes each
    ///     at once.
    ///   - eventLoopGroup: The pool's connections' loops, whose timers the linger uses.
    public init(
        location: PostgresLocation, maximumConnections: Int = 16, outcomeLinger: Duration = .milliseconds(20),
        eventLoopGroup: any EventLoopGroup = PostgresClient.defaultEventLoopGroup, logger: Logger
    ) {
        var configuration = PostgresClient.Configuration(
            host: location.host,
            port: location.port,
            username: location.username,
            password: location.password,
            database: location.database,
            tls: Self.tls(location.tls)
        )
        configuration.options.maximumConnections = maximumConnections
        self.client = PostgresClient(configuration: configuration, eventLoopGroup: eventLoopGroup, backgroundLogger: logger)
        self.heldOutcomes = HeldOutcomes(linger: outcomeLinger, loop: eventLoopGroup.next())
        self.postgres = location
        self.logger = logger
    }

    private static func tls(_ mode: PostgresLocation.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    /// Brings the schema up to date on a connection of its own (the pool need not run yet),
    /// under an advisory lock: of several instances starting together, one migrates and the
    /// others wait for it. Returns the migration versions applied now.
    @discardableResult
    public func migrate() async throws -> [Int] {
        let location = postgres
        var configuration = PostgresConnection.Configuration(
            host: location.host,
            port: location.port,
            username: location.username,
            password: location.password,
            database: location.database,
            tls: .disable
        )
        if location.tls != .disable {
            // Loading the trust roots reads files: off the cooperative threads.
            let context = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(
                        with: Result { try NIOSSLContext(configuration: .makeClientConfiguration()) })
                }
            }
            configuration.tls = location.tls == .require ? .require(context) : .prefer(context)
        }
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            let failure = Self.storeError(error)
            // Named by its redacted URL: the operator sees where, never the password.
            throw StoreError(backendFailure: failure, description: "cannot open \(location.redacted): \(failure)")
        }
        return try await guarded {
            do {
                let applied = try await PostgresSchema.migrate(on: connection, logger: logger)
                try await connection.close()
                return applied
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    // MARK: - Running queries

    /// Runs one statement and collects its rows.
    @discardableResult
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await guarded { try await client.query(query, logger: logger).collect() }
    }

    /// Runs one statement PostgreSQL keeps prepared on each connection, and collects its rows:
    /// for the statements every webhook runs, which would otherwise be parsed and planned each
    /// time.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        try await guarded {
            var rows: [Statement.Row] = []
            for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// Text values bound as `$1`, `$2`, … of a statement kept as a string constant.
    static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { binds.append(value) }
        return binds
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back
    /// when it throws.
    func transaction<Result: Sendable>(
        _ body: @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        return try await guarded {
            try await client.withTransaction(logger: logger) { connection in
                try await body(connection, logger)
            }
        }
    }

    /// Turns the driver's errors into ``StoreError``, described without bound values.
    private func guarded<Result>(_ work: () async throws -> Result) async throws -> Result {
        do {
            return try await work()
        } catch {
            throw Self.storeError(error)
        }
    }

    static func storeError(_ error: any Error) -> any Error {
        switch error {
        case let failure as PSQLError:
            let state = failure.serverInfo?[.sqlState]
            var description = "postgres \(failure.code)"
            if let state { description += " \(state)" }
            if let message = failure.serverInfo?[.message] { description += ": \(message)" }
            // Socket errors (refused, unreachable) carry no bound values either.
            if let underlying = failure.underlying { description += " (\(underlying))" }
            // Serialisation failure, deadlock, lock not available: worth trying again.
            let busy = ["40001", "40P01", "55P03"].contains(state ?? "")
            return StoreError(backendFailure: failure, description: description, isBusy: busy)
        case let failure as PostgresTransactionError:
            if let inner = failure.closureError ?? failure.beginError ?? failure.commitError {
                return storeError(inner)
            }
            return StoreError(backendFailure: failure, description: "postgres transaction failed")
        default:
            return error
        }
    }
}

extension PostgresStore: HeraldStoreBackend, SharedStoreCapabilities {
    public var location: String { postgres.redacted }

    /// Several processes share the database: allowances, wake claims and messages go through it,
    /// and leases found at start may be another's.
    public var sharing: StoreSharing { .shared(self) }

    /// The connection pool.
    public func services(logger: Logger) -> [any Service] { [client] }

    public func ping() async throws {
        try await rows("SELECT 1")
    }
}

/// What the PostgreSQL store refuses to do.
public struct PostgresStoreRefusal: Error, CustomStringConvertible {
    public var description: String
}

extension PostgresRow {
    /// Seconds since 1970 as a date.
    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
}
