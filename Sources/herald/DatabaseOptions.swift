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

    /// Runs `body` on the store; a PostgreSQL store's connection pool runs meanwhile.
    func withStore<Result: Sendable>(
        _ body: @Sendable (any HeraldStoreBackend) async throws -> Result
    ) async throws -> Result {
        let loaded = try await configurationFile.load(flags: database.map { ["database": $0] } ?? [:])
        let choice = try DatabaseChoice(loaded.database)
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
