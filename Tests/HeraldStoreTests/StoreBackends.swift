import Foundation
import GRDB
import HeraldPostgres
import HeraldSQLite
import HeraldStore
import HeraldTestSupport
import Logging
import PostgresNIO
import Testing

/// The back ends every shared store test runs on.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// Logs nothing: the tests assert on rows, not on log lines.
let quietLogger = Logger(label: "herald.store-tests", factory: { _ in SwiftLogNoOpLogHandler() })

/// Runs `body` on a fresh, empty store: a SQLite file in a temporary folder, or a new database on
/// the shared throwaway PostgreSQL server (its connection pool running for as long as `body` does).
func withStore(
    _ backend: Backend, _ body: (any HeraldStoreBackend) async throws -> Void
)
    async throws
{
    switch backend {
    case .sqlite:
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(
            try await SQLiteStore.open(path: folder.appendingPathComponent("herald.sqlite").path))
    case .postgres:
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 1) { try await body($0[0]) }
    }
}

/// `count` stores on one PostgreSQL database, as `count` instances of `herald serve` would have,
/// migrated, their pools running while `body` does.
func withPostgresStores(
    on database: ThrowawayPostgres.Database, count: Int,
    _ body: ([PostgresStore]) async throws -> Void
) async throws {
    let location = try PostgresLocation(url: database.url)
    let stores = (0..<count).map { _ in
        PostgresStore(location: location, maximumConnections: 4, logger: quietLogger)
    }
    for store in stores { try await store.migrate() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for store in stores { group.addTask { await store.client.run() } }
        defer { group.cancelAll() }
        try await body(stores)
    }
}

/// A second way into a store's database, beside the store itself: to set a stage its API
/// cannot (a trigger that makes one of its writes fail) and to read rows as they really are.
struct RawDatabase: Sendable {
    /// Runs one statement.
    let execute: @Sendable (String) async throws -> Void
    /// The first column of the first row, as text (nil for no row or NULL).
    let text: @Sendable (String) async throws -> String?
    /// The first column of the first row, as a number (nil for no row or NULL).
    let number: @Sendable (String) async throws -> Double?

    /// `SELECT count(*) FROM <from>`.
    func count(_ from: String) async throws -> Int { Int(try await number("SELECT count(*) FROM \(from)") ?? 0) }

    /// Makes every insert into `table` fail, as a constraint violation or a full disk would.
    func refuseInserts(into table: String, backend: Backend) async throws {
        switch backend {
        case .sqlite:
            try await execute("CREATE TRIGGER refuse_\(table) BEFORE INSERT ON \(table) BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
        case .postgres:
            try await execute(
                "CREATE FUNCTION refuse_\(table)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
            try await execute("CREATE TRIGGER refuse_\(table) BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION refuse_\(table)()")
        }
    }
}

/// Runs `body` on a fresh, empty store (as ``withStore(_:_:)``) with a second connection to its
/// database.
func withStoreAndDatabase(
    _ backend: Backend, _ body: (any HeraldStoreBackend, RawDatabase) async throws -> Void
) async throws {
    switch backend {
    case .sqlite:
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("herald.sqlite").path
        let store = try await SQLiteStore.open(path: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let raw = RawDatabase(
            execute: { sql in try await queue.write { db in try db.execute(sql: sql) } },
            text: { sql in try await queue.read { db in try String.fetchOne(db, sql: sql) } },
            number: { sql in try await queue.read { db in try Double.fetchOne(db, sql: sql) } }
        )
        try await body(store, raw)
    case .postgres:
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 1) { stores in
            let client = stores[0].client
            let raw = RawDatabase(
                execute: { sql in _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: quietLogger).collect() },
                text: { sql in
                    try await client.query(PostgresQuery(unsafeSQL: sql), logger: quietLogger).collect().first?.decode(String?.self) ?? nil
                },
                number: { sql in
                    // Through text: counts are bigint, times double precision.
                    let text =
                        try await client.query(PostgresQuery(unsafeSQL: "SELECT (\(sql))::text"), logger: quietLogger).collect()
                        .first?.decode(String?.self) ?? nil
                    return text.flatMap(Double.init)
                }
            )
            try await body(stores[0], raw)
        }
    }
}
