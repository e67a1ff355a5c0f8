import ArgumentParser
import Foundation
import HeraldPostgres
import HeraldPush
import HeraldServer
import HeraldSQLite
import HeraldStore
import Hummingbird
import Logging
import ServiceLifecycle

/// `herald serve`: runs the Notification Delivery Service.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Notification Delivery Service.",
        discussion: """
            Every option can also be set with its environment variable (shown in brackets) or in the
            YAML file given by --config; a flag wins over the variable, which wins over the file.
            Push credentials come from HERALD_APNS_* and HERALD_FCM_* variables or the file, never
            from flags (see docs/configuration.md; `herald config check` validates them).
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

    @Option(help: "Who may register devices: open, challenge (the app proves it holds the token) or key (an API key of scope devices) [HERALD_REGISTRATION, default open].")
    var registration: String?

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

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical [HERALD_LOG_LEVEL, default info].")
    var logLevel: String?

    @Option(help: "Take plain http:// Web Push endpoints, for local development [HERALD_WEBPUSH_ALLOW_INSECURE_ENDPOINTS, default false].")
    var webpushAllowInsecureEndpoints: Bool?

    @Option(help: "With Web Push but no APNs or FCM credentials, serve iOS and Android with the local development provider [HERALD_LOCAL_PROVIDER, default true].")
    var localProvider: Bool?

    @Option(help: "Take Web Push endpoints on loopback, private, link-local or multicast addresses [HERALD_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS, default false].")
    var webpushAllowPrivateEndpoints: Bool?

    @Option(help: "Web Push requests in flight to one push service at most [HERALD_WEBPUSH_CONCURRENCY_PER_ORIGIN, default 8].")
    var webpushConcurrencyPerOrigin: Int?

    @Option(help: "Take zap requests naming relays on loopback, private, link-local or multicast addresses [HERALD_NOSTR_ALLOW_PRIVATE_RELAYS, default false].")
    var nostrAllowPrivateRelays: Bool?

    @OptionGroup var configurationFile: ConfigurationOptions

    /// The flags given, by setting key.
    var flags: [String: String] {
        let given: [(String, String?)] = [
            ("host", host), ("port", port.map(String.init)), ("database", database), ("public_url", publicURL),
            ("accept_raw_tokens", acceptRawTokens.map(String.init)), ("registration", registration),
            ("job_ttl", jobTTL.map(String.init)),
            ("reply_timeout", replyTimeout.map(String.init)), ("max_concurrent_sends", maxConcurrentSends.map(String.init)),
            ("idle_timeout", idleTimeout.map(String.init)), ("request_read_timeout", requestReadTimeout.map(String.init)),
            ("max_connections", maxConnections.map(String.init)), ("max_pending_webhooks", maxPendingWebhooks.map(String.init)),
            ("target_pushes_per_minute", targetPushesPerMinute.map(String.init)),
            ("target_push_burst", targetPushBurst.map(String.init)), ("max_held_replies", maxHeldReplies.map(String.init)),
            ("max_jobs_in_memory", maxJobsInMemory.map(String.init)), ("log_level", logLevel),
            ("lease_seconds", leaseSeconds.map(String.init)),
            ("local_provider", localProvider.map(String.init)),
            ("webpush.allow_insecure_endpoints", webpushAllowInsecureEndpoints.map(String.init)),
            ("webpush.allow_private_endpoints", webpushAllowPrivateEndpoints.map(String.init)),
            ("webpush.concurrency_per_origin", webpushConcurrencyPerOrigin.map(String.init)),
            ("nostr.allow_private_relays", nostrAllowPrivateRelays.map(String.init)),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { key, value in value.map { (key, $0) } })
    }

    func run() async throws {
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
        let httpClient = try providerSettings.makeHTTPClient(logger: logger)
        do {
            let providers = try providerSettings.makeRouter(
                httpClient: httpClient,
                recordLocal: { push in
                    try await store.recordLocalPush(
                        platform: push.target.platform, token: push.target.token, payload: push.payload, now: Date()
                    )
                },
                sharing: TokenSharing(store: StoreTokenSharing(store: store), logger: logger.with(component: "provider-tokens")),
                logger: logger
            )
            for warning in settings.warnings { logger.warning("\(warning)") }
            logger.info(
                "starting herald",
                metadata: [
                    "database": "\(store.location)",
                    "apps": "\(providers.apps.keys.sorted().joined(separator: ","))",
                    "ios": "\(providers.providerName(for: .ios))",
                    "android": "\(providers.providerName(for: .android))",
                    "webpush": "\(providers.providerName(for: .webpush))",
                    "accept-raw-tokens": "\(settings.server.settings.acceptRawTokens)",
                ]
            )
            try await Self.serve(opened, configuration: settings.server, providers: providers, logger: logger)
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
