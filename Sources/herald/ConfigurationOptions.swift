import ArgumentParser
import Foundation
import HeraldServer

/// `--config`, taken by every subcommand: each reads the one configuration `serve` runs with
/// (flags → `HERALD_*` → the file → defaults) through ``HeraldConfiguration/load(flags:environment:file:)``,
/// so `herald keys` and `herald dead-letters` reach the database `serve` uses, and `herald send`
/// the apps it sends for.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "YAML configuration file; flags and HERALD_* variables win over it [HERALD_CONFIG].")
    var file: String?

    /// The configuration, with `flags` (by setting key) over everything else.
    func load(flags: [String: String] = [:]) async throws -> HeraldConfiguration {
        let environment = ProcessInfo.processInfo.environment
        do {
            return try await HeraldConfiguration.load(flags: flags, environment: environment, file: file ?? environment["HERALD_CONFIG"])
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
