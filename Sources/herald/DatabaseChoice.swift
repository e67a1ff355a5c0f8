import ArgumentParser
import Foundation
import HeraldPostgres
import HeraldStore
import Logging
import ServiceLifecycle

/// Which database `HERALD_DATABASE` / `--database` names: a `postgres://` (or `postgresql://`)
/// URL, else a SQLite file (a plain path, or one after `sqlite:`).
enum DatabaseChoice: Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    init(_ text: String) throws {
        if PostgresLocation.isPostgresURL(text) {
            do {
                self = .postgres(try PostgresLocation(url: text))
            } catch {
                // The error never quotes the URL: it may hold a password.
                throw ValidationError("HERALD_DATABASE: \(error.description)")
            }
        } else if text.hasPrefix("sqlite://") {
            self = .sqlite(path: String(text.dropFirst("sqlite://".count)))
        } else if text.hasPrefix("sqlite:") {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The opened store, its migrations applied, and what must run beside it while it is used.
    struct Opened {
        var store: any HeraldStoreBackend
        /// A PostgreSQL store's connection pool; nil for SQLite.
        var postgresClient: (any Service)?
    }

    func open(logger: Logger) async throws -> Opened {
        switch self {
        case .sqlite(let path):
            return Opened(store: try await SQLiteStore.open(path: path), postgresClient: nil)
        case .postgres(let location):
            let store = PostgresStore(location: location, logger: logger)
            try await store.migrate()
            return Opened(store: store, postgresClient: store.client)
        }
    }
}
