import Foundation
import HeraldPostgres
import HeraldSQLite
import HeraldStore
import HeraldTestSupport
import Logging
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
