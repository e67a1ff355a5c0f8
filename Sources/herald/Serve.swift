import ArgumentParser
import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import Hummingbird
import Logging
import ServiceLifecycle

/// `herald serve`: runs the Notification Delivery Service.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Notification Delivery Service.",
        discussion: """
            Every option can also be set with its environment variable (shown in brackets); a flag wins.
            Push credentials come from HERALD_APNS_* and HERALD_FCM_* variables only (see README).
            With none set, a local development provider records pushes in the database.
            """
    )

    @Option(help: "Address to listen on [HERALD_HOST, default 127.0.0.1].")
    var host: String?

    @Option(help: "Port to listen on [HERALD_PORT, default 8080].")
    var port: Int?

    @Option(
        help: "SQLite file, or postgres://user:password@host:port/database for several instances on one database [HERALD_DATABASE, default ./herald.sqlite]."
    )
    var database: String?

    @Option(help: "Seconds a job is leased to the instance sending it; a crashed instance's jobs are sent by others after it [HERALD_LEASE_SECONDS, default 60].")
    var leaseSeconds: Int?

    @Option(help: "Base URL others reach this server at [HERALD_PUBLIC_URL, default http://HOST:PORT].")
    var publicURL: String?

    @Option(help: "Accept raw push tokens on the webhook, not only aliases [HERALD_ACCEPT_RAW_TOKENS, default true].")
    var acceptRawTokens: Bool?

    @Option(help: "Seconds a webhook's push is worth delivering [HERALD_JOB_TTL, default 3600].")
    var jobTTL: Int?

    @Option(help: "Seconds a request waits for the device's answer on its reply URL [HERALD_REPLY_TIMEOUT, default 30].")
    var replyTimeout: Int?

    @Option(help: "Sends in flight at once [HERALD_MAX_CONCURRENT_SENDS, default 256].")
    var maxConcurrentSends: Int?

    @Option(help: "Seconds an idle connection is kept open [HERALD_IDLE_TIMEOUT, default 30].")
    var idleTimeout: Int?

    @Option(help: "Seconds a request may take to arrive, head and body [HERALD_REQUEST_READ_TIMEOUT, default 10].")
    var requestReadTimeout: Int?

    @Option(help: "Open connections at most; past it new ones get 503 [HERALD_MAX_CONNECTIONS, default 4096].")
    var maxConnections: Int?

    @Option(help: "Webhooks waiting for their commit at most; past it 503 overloaded [HERALD_MAX_PENDING_WEBHOOKS, default 4096].")
    var maxPendingWebhooks: Int?

    @Option(help: "Pushes one device token may get per minute, sustained; past it 429 [HERALD_TARGET_PUSHES_PER_MINUTE, default 60].")
    var targetPushesPerMinute: Int?

    @Option(help: "Pushes one device token may get at once [HERALD_TARGET_PUSH_BURST, default 20].")
    var targetPushBurst: Int?

    @Option(help: "Requests held for a device's answer at once; past it 503 overloaded [HERALD_MAX_HELD_REPLIES, default 1024].")
    var maxHeldReplies: Int?

    @Option(help: "Jobs the dispatcher holds in memory at most; the rest wait in the database [HERALD_MAX_JOBS_IN_MEMORY, default 4 x max concurrent sends].")
    var maxJobsInMemory: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error [HERALD_LOG_LEVEL, default info].")
    var logLevel: String?

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        let settings = try ServeSettings(
            host: host, port: port, database: database, publicURL: publicURL,
            acceptRawTokens: acceptRawTokens, jobTTL: jobTTL, replyTimeout: replyTimeout,
            maxConcurrentSends: maxConcurrentSends, logLevel: logLevel,
            idleTimeout: idleTimeout, requestReadTimeout: requestReadTimeout, maxConnections: maxConnections,
            maxPendingWebhooks: maxPendingWebhooks,
            targetPushesPerMinute: targetPushesPerMinute, targetPushBurst: targetPushBurst,
            maxHeldReplies: maxHeldReplies, maxJobsInMemory: maxJobsInMemory, leaseSeconds: leaseSeconds,
            environment: env
        )
        var logger = Logger(label: "herald")
        logger.logLevel = settings.logLevel

        let providerSettings: ProviderSettings
        do {
            providerSettings = try ProviderSettings(environment: env)
        } catch {
            throw ValidationError("\(error)")
        }
        let opened = try await settings.database.open(logger: logger.with(component: "store"))
        let store = opened.store
        let httpClient = try providerSettings.makeHTTPClient(logger: logger)
        do {
            let providers = try providerSettings.makeRouter(
                httpClient: httpClient,
                recordLocal: { push in
                    try await store.recordLocalPush(
                        platform: push.target.platform, token: push.target.token, payload: push.payload, now: Date()
                    )
                },
                logger: logger
            )
            logger.info(
                "starting herald",
                metadata: [
                    "database": "\(store.location)",
                    "ios": "\(providers.providerName(for: .ios))",
                    "android": "\(providers.providerName(for: .android))",
                    "accept-raw-tokens": "\(settings.server.settings.acceptRawTokens)",
                ]
            )
            try await Self.serve(
                store: store, postgresClient: opened.postgresClient, configuration: settings.server,
                providers: providers, logger: logger
            )
        } catch {
            await httpClient.shutdown()
            throw error
        }
        await httpClient.shutdown()
    }
}

extension Serve {
    /// Runs the application on the store: SQLite with its WAL checkpointer; PostgreSQL with its
    /// connection pool, which starts before and stops after every service that uses it.
    static func serve(
        store: any HeraldStoreBackend, postgresClient: (any Service)?, configuration: HeraldServerConfiguration,
        providers: PushRouter, logger: Logger
    ) async throws {
        if let sqlite = store as? SQLiteStore {
            try await buildApplication(configuration: configuration, store: sqlite, providers: providers, logger: logger)
                .runService()
        } else {
            try await runShared(
                store: store, storeServices: postgresClient.map { [$0] } ?? [], configuration: configuration,
                providers: providers, logger: logger
            )
        }
    }

    private static func runShared(
        store: some HeraldStoreBackend, storeServices: [any Service], configuration: HeraldServerConfiguration,
        providers: PushRouter, logger: Logger
    ) async throws {
        try await buildApplication(
            configuration: configuration, store: store, storeServices: storeServices, providers: providers, logger: logger
        ).runService()
    }
}

extension Logger {
    func with(component: String) -> Logger {
        var logger = self
        logger[metadataKey: "component"] = "\(component)"
        return logger
    }
}

/// `serve`'s settings: flag, else `HERALD_*` variable, else default.
struct ServeSettings {
    var database: DatabaseChoice
    var logLevel: Logger.Level
    var server: HeraldServerConfiguration

    init(
        host: String?, port: Int?, database: String?, publicURL: String?, acceptRawTokens: Bool?,
        jobTTL: Int?, replyTimeout: Int? = nil, maxConcurrentSends: Int?, logLevel: String?,
        idleTimeout: Int? = nil, requestReadTimeout: Int? = nil, maxConnections: Int? = nil,
        maxPendingWebhooks: Int? = nil,
        targetPushesPerMinute: Int? = nil, targetPushBurst: Int? = nil, maxHeldReplies: Int? = nil,
        maxJobsInMemory: Int? = nil, leaseSeconds: Int? = nil,
        environment env: [String: String]
    ) throws {
        func int(_ key: String) throws -> Int? {
            guard let text = env[key], !text.isEmpty else { return nil }
            guard let value = Int(text), value > 0 else { throw ValidationError("\(key) must be a positive integer") }
            return value
        }
        func bool(_ key: String) throws -> Bool? {
            guard let text = env[key]?.lowercased(), !text.isEmpty else { return nil }
            switch text {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw ValidationError("\(key) must be true or false")
            }
        }
        let host = host ?? env["HERALD_HOST"] ?? "127.0.0.1"
        let port = try port ?? int("HERALD_PORT") ?? 8080
        self.database = try DatabaseChoice.from(flag: database, environment: env)
        let levelText = logLevel ?? env["HERALD_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else {
            throw ValidationError("log level must be one of trace, debug, info, notice, warning, error, critical")
        }
        self.logLevel = level
        let publicURL = publicURL ?? env["HERALD_PUBLIC_URL"] ?? "http://\(host):\(port)"
        let isLocal = (try? ProviderSettings(environment: env))?.isLocal ?? false
        var dispatcher = DispatcherConfiguration()
        if let sends = try maxConcurrentSends ?? int("HERALD_MAX_CONCURRENT_SENDS") {
            dispatcher.maxConcurrentSends = sends
        }
        dispatcher.maxJobsInMemory = try maxJobsInMemory ?? int("HERALD_MAX_JOBS_IN_MEMORY")
        // Intake leases the jobs it hands straight to the dispatcher for as long.
        dispatcher.lease = .seconds(try leaseSeconds ?? int("HERALD_LEASE_SECONDS") ?? 60)
        var intake = IntakeConfiguration()
        if let maxPending = try maxPendingWebhooks ?? int("HERALD_MAX_PENDING_WEBHOOKS") {
            intake.maxPending = maxPending
        }
        server = HeraldServerConfiguration(
            host: host,
            port: port,
            settings: ServerSettings(
                publicURL: publicURL,
                acceptRawTokens: try acceptRawTokens ?? bool("HERALD_ACCEPT_RAW_TOKENS") ?? true,
                jobTTL: .seconds(try jobTTL ?? int("HERALD_JOB_TTL") ?? 3600),
                targetPushesPerMinute: try targetPushesPerMinute ?? int("HERALD_TARGET_PUSHES_PER_MINUTE") ?? 60,
                targetPushBurst: try targetPushBurst ?? int("HERALD_TARGET_PUSH_BURST") ?? 20,
                localProvider: isLocal,
                replyTimeout: .seconds(try replyTimeout ?? int("HERALD_REPLY_TIMEOUT") ?? 30),
                maxHeldReplies: try maxHeldReplies ?? int("HERALD_MAX_HELD_REPLIES") ?? 1_024
            ),
            intake: intake,
            dispatcher: dispatcher,
            edge: EdgeLimits(
                idleTimeout: .seconds(try idleTimeout ?? int("HERALD_IDLE_TIMEOUT") ?? 30),
                requestReadTimeout: .seconds(try requestReadTimeout ?? int("HERALD_REQUEST_READ_TIMEOUT") ?? 10),
                maxConnections: try maxConnections ?? int("HERALD_MAX_CONNECTIONS") ?? 4_096
            )
        )
    }
}
