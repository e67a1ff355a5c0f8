import ArgumentParser
import Foundation
import HeraldPostgres
import HeraldSQLite
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

    /// The opened store, its migrations applied: each back end as its own type, so `serve`
    /// composes the application for it without a cast.
    enum Opened {
        case sqlite(SQLiteStore)
        /// The store and its connection pool, which must run while the store is used.
        case postgres(PostgresStore)

        var store: any HeraldStoreBackend {
            switch self {
            case .sqlite(let store): store
            case .postgres(let store): store
            }
        }
    }

    func open(logger: Logger) async throws -> Opened {
        switch self {
        case .sqlite(let path):
            return .sqlite(try await SQLiteStore.open(path: path))
        case .postgres(let location):
            let store = PostgresStore(location: location, logger: logger)
            try await store.migrate()
            return .postgres(store)
        }
    }
}
