import ArgumentParser
import Foundation
import HeraldStore
import Logging

/// `--database` for the commands that work on the database directly (`herald keys`,
/// `herald dead-letters`): the one `herald serve` uses, from the same flag, variable or file.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "SQLite file or postgres:// URL [HERALD_DATABASE, the configuration file's `database`, default ./herald.sqlite].")
    var database: String?

    @OptionGroup var configurationFile: ConfigurationOptions

    /// No SQLite file where the configuration points: a command that only reads or changes
    /// what is there says so, rather than making an empty database and finding nothing in it.
    struct NoDatabase: Error, CustomStringConvertible {
        var path: String
        var description: String {
            "no database at \(path): `herald serve` makes it on its first start; or name yours with --database (HERALD_DATABASE)"
        }
    }

    /// Runs `body` on the store; a PostgreSQL store's connection pool runs meanwhile.
    ///
    /// - Parameter creating: Whether a SQLite file that is not there yet is made (`keys create`,
    ///   before the first `serve`); otherwise it is ``NoDatabase``.
    func withStore<Result: Sendable>(
        creating: Bool = false, _ body: @Sendable (any HeraldStoreBackend) async throws -> Result
    ) async throws -> Result {
        let loaded = try await configurationFile.load(flags: database.map { ["database": $0] } ?? [:])
        let choice = try DatabaseChoice(loaded.database)
        if case .sqlite(let path) = choice, !creating, !FileManager.default.fileExists(atPath: path) { throw NoDatabase(path: path) }
        switch try await choice.open(logger: Logger(label: "herald.cli")) {
        case .sqlite(let store):
            return try await body(store)
        case .postgres(let store):
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.client.run() }
                defer { group.cancelAll() }
                return try await body(store)
            }
        }
    }
}
