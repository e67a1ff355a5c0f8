import ArgumentParser
import Foundation
import HeraldPostgres
import HeraldPush
import HeraldSQLite
import HeraldServer
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `herald serve`: runs the Notification Delivery Service.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Notification Delivery Service.",
        discussion: """
            Every setting below is also a HERALD_* variable (in brackets) and a key of the YAML file given by --config; a flag wins over the variable, which wins over the file. Push credentials come from HERALD_APNS_* and HERALD_FCM_* variables or the file, never from flags (see docs/configuration.md; `herald config check` validates them). With none set, a local development provider records pushes in the database.

            SETTINGS:
            \(SettingFlags.help)
            """
    )

    /// Every setting's flag (`--port 8080`), made from the settings table: see ``SettingFlags``.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var settingFlags: [String] = []

    @OptionGroup var configurationFile: ConfigurationOptions

    func run() async throws {
        let flags: [String: String]
        do {
            flags = try SettingFlags.parse(settingFlags)
        } catch {
            throw ValidationError("\(error)")
        }
        let settings = try await configurationFile.load(flags: flags)
        var logger = Logger(label: "herald")
        logger.logLevel = settings.logLevel
        let providerSettings = settings.providers
        let database: DatabaseChoice
        do {
            database = try DatabaseChoice(settings.database)
        } catch {
            throw ValidationError("\(error)")
        }
        // SQLite assumes one process per file (it frees every lease at start); PostgreSQL is shared.
        var processLock: DatabaseProcessLock?
        if case .sqlite(let path) = database {
            do {
                processLock = try DatabaseProcessLock.acquire(forDatabaseAt: path)
            } catch {
                throw ValidationError(error.description)
            }
        }
        defer { withExtendedLifetime(processLock) {} }
        let opened = try await database.open(logger: logger.with(component: "store"))
        let store = opened.store
        // The dispatcher's sends start on SQLite's writer thread while it is idle: a connection
        // there writes them and reads their answers without waking another thread.
        var localLoops: [any EventLoop] = []
        if case .sqlite(let sqlite) = opened, let loop = sqlite.sendingLoop { localLoops.append(loop) }
        let httpClient = try providerSettings.makeHTTPClient(logger: logger, localLoops: localLoops)
        do {
            let providers = try providerSettings.makeRouter(
                httpClient: httpClient,
                sharing: TokenSharing(store: store, logger: logger.with(component: "provider-tokens")),
                logger: logger
            )
            for warning in settings.warnings { logger.warning("\(warning)") }
            logger.info(
                "starting herald",
                metadata: [
                    "database": "\(store.location)",
                    "apps": "\(providers.apps.keys.sorted().joined(separator: ","))",
                    "ios": "\(providers.providerName(for: .device(.ios)))",
                    "android": "\(providers.providerName(for: .device(.android)))",
                    "webpush": "\(providers.providerName(for: .device(.webpush)))",
                    "accept-raw-tokens": "\(settings.server.settings.acceptRawTokens)",
                    "registration": "\(settings.server.settings.registration.rawValue)",
                ]
            )
            do {
                try await Self.serve(opened, configuration: settings.server, providers: providers, logger: logger)
            } catch let error as IOError {
                guard let reason = Self.listenFailure(error, host: settings.server.host, port: settings.server.port) else { throw error }
                FileHandle.standardError.write(Data("herald: \(reason)\n".utf8))
                throw ExitCode.failure
            }
        } catch {
            await httpClient.shutdown()
            throw error
        }
        await httpClient.shutdown()
    }
}

extension Serve {
    /// Why the listening socket could not be had, in one line that names the setting to change;
    /// nil for any other failure.
    static func listenFailure(_ error: IOError, host: String, port: Int) -> String? {
        switch error.errnoCode {
        case EADDRINUSE:
            return
                "cannot listen on \(host):\(port): the port is already in use; choose another with --port or HERALD_PORT, or stop what listens there"
        case EADDRNOTAVAIL:
            return "cannot listen on \(host):\(port): \(host) is not an address of this machine; set --host or HERALD_HOST"
        case EACCES:
            return "cannot listen on \(host):\(port): permission denied (ports below 1024 need privileges); choose another with --port or HERALD_PORT"
        default:
            return nil
        }
    }

    /// Runs the application on the store: SQLite with its WAL checkpointer; PostgreSQL with its
    /// connection pool, which starts before and stops after every service that uses it.
    static func serve(
        _ opened: DatabaseChoice.Opened, configuration: HeraldServerConfiguration, providers: PushRouter, logger: Logger
    ) async throws {
        switch opened {
        case .sqlite(let store):
            try await buildApplication(configuration: configuration, store: store, providers: providers, logger: logger)
                .runService()
        case .postgres(let store):
            try await buildApplication(configuration: configuration, store: store, providers: providers, logger: logger)
                .runService()
        }
    }
}

extension Logger {
    func with(component: String) -> Logger {
        var logger = self
        logger[metadataKey: "component"] = "\(component)"
        return logger
    }
}
