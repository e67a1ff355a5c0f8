import ArgumentParser
import Foundation
import HeraldPush
import HeraldServer
import Logging

/// `herald config`: the configuration `serve` would run with.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect the configuration.",
        subcommands: [Check.self]
    )

    /// Reads the configuration as `serve` would (file, `HERALD_*` variables, defaults), opens
    /// every file it names and parses every key, without starting anything.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the configuration without starting the server: files readable, keys parse, URLs well-formed.",
            discussion: "Takes every flag `herald serve` takes (`herald serve --help` lists them), and reports each with where it came from."
        )

        /// `serve`'s setting flags (``SettingFlags``), checked as `serve` would take them.
        @Argument(parsing: .allUnrecognized, help: .hidden)
        var settingFlags: [String] = []

        @OptionGroup var configurationFile: ConfigurationOptions

        func run() async throws {
            let settings: HeraldConfiguration
            do {
                settings = try await configurationFile.load(flags: try SettingFlags.parse(settingFlags))
            } catch {
                FileHandle.standardError.write(Data("invalid configuration: \(error)\n".utf8))
                throw ExitCode(1)
            }
            // Building the push client and providers parses the trust roots and the signing keys.
            var logger = Logger(label: "herald-config")
            logger.logLevel = .critical
            do {
                let client = try settings.providers.makeHTTPClient(logger: logger)
                do {
                    _ = try settings.providers.makeRouter(httpClient: client, logger: logger)
                } catch {
                    await client.shutdown()
                    throw error
                }
                await client.shutdown()
            } catch {
                FileHandle.standardError.write(Data("invalid configuration: \(error)\n".utf8))
                throw ExitCode(1)
            }
            for warning in settings.warnings { print("warning: \(warning)") }
            for (name, value) in settings.summary { print("\(name): \(value)") }
            if !settings.given.isEmpty {
                print("settings given (not defaults):")
                for given in settings.given { print("  \(given.key) = \(given.value)  [\(given.source)]") }
            }
            print("configuration ok")
        }
    }
}
