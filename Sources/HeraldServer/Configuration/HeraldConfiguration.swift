import Configuration
import Foundation
import HeraldNostr
import HeraldPush
import HeraldWire
import Logging

/// One setting of `herald serve`: its key in the configuration file, its `HERALD_*` variable,
/// whether it is also a flag, its default and what it does. ``HeraldConfiguration/settings`` is
/// the one list; docs/configuration.md's table is tested against it.
public struct SettingDescription: Sendable, Hashable {
    /// The key in `herald.yaml` (dots for nesting: `apns.key_file`).
    public var key: String
    /// `HERALD_` and the key in capitals, dots as underscores.
    public var environment: String { "HERALD_" + key.uppercased().replacingOccurrences(of: ".", with: "_") }
    /// `--port`, `--webpush-allow-private-endpoints`; nil for secrets and credentials, which never
    /// go on a command line (it shows in `ps`).
    public var flag: String? {
        isFlag ? "--" + key.replacingOccurrences(of: "_", with: "-").replacingOccurrences(of: ".", with: "-") : nil
    }
    public var isFlag: Bool
    /// The default as docs/configuration.md shows it.
    public var defaultValue: String
    public var help: String

    init(_ key: String, flag: Bool = true, default defaultValue: String, _ help: String) {
        self.key = key
        self.isFlag = flag
        self.defaultValue = defaultValue
        self.help = help
    }
}

/// Everything `herald serve` is configured with, read in one place: a flag wins over its
/// `HERALD_*` variable, which wins over the configuration file (`--config` / `HERALD_CONFIG`,
/// YAML), which wins over the default.
public struct HeraldConfiguration: Sendable {
    public var server: HeraldServerConfiguration
    public var database: String
    public var logLevel: Logger.Level
    public var providers: ProviderSettings
    /// The file read, if any.
    public var file: String?
    /// What is worth telling the operator but not refusing: `HERALD_*` variables that name no
    /// setting (the environment is shared with other software).
    public var warnings: [String] = []
    /// Every setting given a value other than its default, where it came from, secrets masked:
    /// what `config check` shows, so a user sees what they just set took.
    public var given: [GivenSetting] = []

    /// A setting as given: its key, its value as safe to print, and its flag, variable or file.
    public struct GivenSetting: Sendable, Hashable {
        public var key: String
        public var value: String
        public var source: String
        public init(key: String, value: String, source: String) {
            self.key = key
            self.value = value
            self.source = source
        }
    }

    /// A value fit to print: URLs without their passwords. Key files are named, never read out.
    static func shown(_ key: String, _ value: String) -> String {
        switch key {
        case "database", "https_proxy": return redactingPassword(value)
        default: return value
        }
    }

    /// Where nothing is set. Each default is written once, in its type's initialiser
    /// (``DispatcherConfiguration``, ``IntakeConfiguration``, ``ServerSettings``, ``EdgeLimits``, a
    /// room's settings) or here; the settings table and the parsers read them from these values.
    public static let defaultHost = "127.0.0.1"
    public static let defaultPort = 8080
    public static let defaultDatabase = "./herald.sqlite"
    static let defaultDispatcher = DispatcherConfiguration()
    static let defaultIntake = IntakeConfiguration()
    static let defaultSettings = ServerSettings(publicURL: "http://\(defaultHost):\(defaultPort)")
    static let defaultEdge = EdgeLimits()

    /// Every setting, in docs/configuration.md's order: the core's, then each room's
    /// (``ServerSettings/rooms``).
    public static let settings: [SettingDescription] = core + ServerSettings.rooms.flatMap { $0.room.rows }

    /// The settings no capability owns: the server's, the push providers' and the egress's.
    static let core: [SettingDescription] = {
        func seconds(_ duration: Duration) -> String { String(duration.components.seconds) }
        let dispatcher = defaultDispatcher
        let intake = defaultIntake
        let server = defaultSettings
        let edge = defaultEdge
        return [
            .init("host", default: defaultHost, "Address to listen on"),
            .init("port", default: String(defaultPort), "Port to listen on"),
            .init("database", default: defaultDatabase, "The database: a SQLite file, or a postgres:// URL"),
            .init(
                "lease_seconds", default: seconds(dispatcher.lease), "Seconds a job (and an NWC subscription) stays leased to the instance holding it"
            ),
            .init("public_url", default: "http://HOST:PORT", "Base URL others reach this server at; webhook URLs start with it"),
            .init("accept_raw_tokens", default: String(server.acceptRawTokens), "Accept raw push tokens on the webhook, not only registered aliases"),
            .init(
                "registration", default: server.registration.rawValue,
                "Who may register devices: open, challenge (the app proves it holds the token) or key (an API key of scope devices)"),
            .init(
                "registrations_per_minute", default: String(server.registrationsPerMinute),
                "Registrations one client address may make per minute on each registration route (devices, wake gateway, NWC); past it 429"),
            .init(
                "trusted_proxies", default: "",
                "Reverse proxies (addresses and CIDR ranges, comma-separated) whose X-Forwarded-For, Forwarded and X-Forwarded-Proto name the client"
            ),
            .init("job_ttl", default: seconds(server.jobTTL), "Seconds a push is worth delivering; later it is dead-lettered"),
            .init("reply_timeout", default: seconds(server.replyTimeout), "Seconds a request waits for the device's answer on its reply URL"),
            .init("max_concurrent_sends", default: String(dispatcher.maxConcurrentSends), "Sends in flight at once"),
            .init("max_jobs_in_memory", default: "4 x max_concurrent_sends", "Jobs the dispatcher holds in memory; the rest wait in the database"),
            .init("max_pending_webhooks", default: String(intake.maxPending), "Webhooks waiting for their commit; past it 503 overloaded"),
            .init(
                "target_pushes_per_minute", default: String(server.targetPushesPerMinute),
                "Pushes one device token may get per minute, sustained; past it 429"),
            .init("target_push_burst", default: String(server.targetPushBurst), "Pushes one device token may get at once"),
            .init("max_held_replies", default: String(server.maxHeldReplies), "Requests held for a device's answer at once; past it 503 overloaded"),
            .init("idle_timeout", default: seconds(edge.idleTimeout), "Seconds an idle connection is kept open"),
            .init("request_read_timeout", default: seconds(edge.requestReadTimeout), "Seconds a request may take to arrive, head and body"),
            .init("max_connections", default: String(edge.maxConnections), "Open connections at most; past it new ones get 503"),
            .init("log_level", default: "info", "trace, debug, info, notice, warning, error, critical"),
            .init("apns.key_file", flag: false, default: "", "Path of the APNs `.p8` token-signing key"),
            .init("apns.key_id", flag: false, default: "", "The key's id"),
            .init("apns.team_id", flag: false, default: "", "The Apple developer team id"),
            .init("apns.topic", flag: false, default: "", "The app's bundle id"),
            .init("apns.environment", flag: false, default: "production", "`production` or `sandbox`"),
            .init("apns.url", flag: false, default: "", "Overrides the APNs base URL (proxies, tests)"),
            .init("apns.connections", flag: false, default: "1", "HTTP/2 connections per push origin, 1 to 64"),
            .init(
                "fcm.service_account_file", flag: false, default: "",
                "Google service-account JSON; its `token_uri` is the OAuth endpoint. Set nowhere, `GOOGLE_APPLICATION_CREDENTIALS` is read"
            ),
            .init("fcm.url", flag: false, default: "https://fcm.googleapis.com", "Overrides the FCM base URL"),
            .init(
                "local_provider", default: "true",
                "With Web Push but no APNs or FCM credentials, serve iOS and Android with the local development provider; false turns them off"),
            .init("webpush.vapid_key_file", flag: false, default: "", "PEM of the P-256 VAPID key Web Push is signed with (`herald webpush keygen`)"),
            .init("webpush.contact", flag: false, default: "", "`mailto:` or `https:` contact push services see in the VAPID token"),
            .init("webpush.allow_insecure_endpoints", default: "false", "Take plain `http://` Web Push endpoints (local development only)"),
            .init(
                "webpush.allow_private_endpoints", default: "false", "Take Web Push endpoints on loopback, private, link-local or multicast addresses"
            ),
            .init(
                "webpush.concurrency_per_origin", default: String(WebPushPolicy().concurrencyPerOrigin),
                "Web Push requests in flight to one push service at most"),
            .init(
                "webpush.navigate_url", default: "public_url",
                "The https URL a declarative Web Push notification opens when tapped; with neither it nor an https public_url, declarative subscriptions get the plain form"
            ),
            .init(
                "nostr.secret_key_file", flag: false, default: "",
                "Nostr secret key (hex or nsec) zap receipts are signed with; turns zaps on (`herald nostr keygen`)"),
            .init(
                "nostr.allow_private_relays", default: "false",
                "Take zap requests naming relays on loopback, private, link-local or multicast addresses"),
            .init(
                "wake_gateway.audience", flag: false, default: "public_url's host",
                "The audience wake gateway registrations are signed for (`GET /wake/v1/info`)"),
            .init("tls.ca_file", flag: false, default: "", "PEM of extra trust roots for outgoing TLS"),
            .init(
                "https_proxy", flag: false, default: "",
                "`http://[user:password@]host:port` of the proxy APNs, FCM, Google's token endpoint and Web Push go through. Set nowhere, `HTTPS_PROXY` / `https_proxy` is read"
            ),
            .init(
                "no_proxy", flag: false, default: "", "Hosts reached without the proxy, comma-separated. Set nowhere, `NO_PROXY` / `no_proxy` is read"
            ),
        ]
    }()

    /// Why the configuration cannot be used, in words an operator can act on.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Reads the layers and builds the configuration.
    ///
    /// - Parameters:
    ///   - flags: Values given on the command line, by setting key.
    ///   - environment: The process environment (`HERALD_*` variables are read, nothing else).
    ///   - file: A YAML file; nil for none.
    public static func load(flags: [String: String], environment: [String: String], file: String?) async throws
        -> HeraldConfiguration
    {
        let parsed = try file.map(ConfigurationFile.init(path:))
        if let parsed {
            let unknown = SettingNames.unknownKeys(in: parsed.document)
            if !unknown.isEmpty { throw Invalid("\(parsed.path): " + unknown.joined(separator: "; ")) }
        }
        let reader = reader(flags: flags, environment: environment, file: parsed)
        var values = values(from: reader)
        var source = source(flags: flags, environment: environment, file: file, resolved: values)
        // Variables other software reads for the same thing, used when Herald's own setting is
        // set nowhere: Google's libraries (and gorush) take the service account from one, curl
        // and nearly everything else take the proxy from the others.
        for (variable, others) in conventionalVariables where values[variable] == nil {
            guard
                let (other, value) = others.lazy.compactMap({ name in
                    environment[name].map { (name, $0.trimmingCharacters(in: .whitespaces)) }
                }).first(where: { !$0.1.isEmpty })
            else { continue }
            values[variable] = value
            let named = source
            source = { asked in asked == variable ? other : named(asked) }
        }
        var configuration = try HeraldConfiguration(values: values, source: source)
        configuration.file = file
        // The apps' credentials go through the same reader, under `apps.<name>.`; only their
        // names come from the file directly, as no fixed list of keys can name them.
        for name in try AppsFile.names(in: parsed) {
            guard configuration.providers.apps[name] == nil else {
                throw Invalid("app '\(name)' is configured twice: by HERALD_APNS_* / HERALD_FCM_* (or apns:/fcm:) and in apps")
            }
            configuration.providers.apps[name] = try AppsFile.app(name, file: file ?? "", reader: reader)
        }
        for name in try WakeGatewayFile.topicNames(in: parsed) {
            configuration.server.settings.wakeGateway.topics[name] = try WakeGatewayFile.topic(name, file: file ?? "", reader: reader)
        }
        configuration.server.settings.localProvider = configuration.providers.usesLocal
        configuration.server.settings.localWebPush = configuration.providers.isLocal
        configuration.warnings = SettingNames.unknownVariables(in: environment) + configuration.providers.warnings
        let from = source
        configuration.given = settings.compactMap { setting in
            guard let value = values[setting.environment]?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
                value != setting.defaultValue
            else { return nil }
            return GivenSetting(key: setting.key, value: Self.shown(setting.key, value), source: from(setting.environment))
        }
        return configuration
    }

    /// Read as `fcm.service_account_file` when that is set nowhere, as Google's libraries do.
    public static let googleCredentialsVariable = "GOOGLE_APPLICATION_CREDENTIALS"

    /// Herald's variable, and the conventional ones read in its place, first found wins.
    static let conventionalVariables: [(String, [String])] = [
        ("HERALD_FCM_SERVICE_ACCOUNT_FILE", [googleCredentialsVariable]),
        ("HERALD_HTTPS_PROXY", ["HTTPS_PROXY", "https_proxy"]),
        ("HERALD_NO_PROXY", ["NO_PROXY", "no_proxy"]),
    ]

    /// The one reader of every layer: flags, then `HERALD_*` variables, then the file.
    static func reader(flags: [String: String], environment: [String: String], file: ConfigurationFile?) -> ConfigReader {
        func provider(_ name: String, _ values: (SettingDescription) -> String?) -> InMemoryProvider {
            var entries: [AbsoluteConfigKey: ConfigValue] = [:]
            for setting in settings {
                guard let value = values(setting)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { continue }
                entries[AbsoluteConfigKey(ConfigKey(setting.key))] = ConfigValue(.string(value), isSecret: false)
            }
            return InMemoryProvider(name: name, values: entries)
        }
        var providers: [any ConfigProvider] = [
            provider("flags") { flags[$0.key] },
            provider("environment") { environment[$0.environment] },
        ]
        if let file { providers.append(file.provider) }
        return ConfigReader(providers: providers)
    }

    /// The resolved values (by `HERALD_*` name) as a reader by key, which the rooms read
    /// scoped to their own keys.
    static func reader(values: [String: String]) -> ConfigReader {
        var entries: [AbsoluteConfigKey: ConfigValue] = [:]
        for setting in settings {
            guard let value = values[setting.environment] else { continue }
            entries[AbsoluteConfigKey(ConfigKey(setting.key))] = ConfigValue(.string(value), isSecret: false)
        }
        return ConfigReader(provider: InMemoryProvider(name: "settings", values: entries))
    }

    /// Where a setting's value came from, for errors: its flag, its variable, or its key in the
    /// file; its variable when it is set nowhere (the name to set it by).
    static func source(
        flags: [String: String], environment: [String: String], file: String?, resolved: [String: String]
    ) -> @Sendable (String) -> String {
        { variable in
            guard let setting = settings.first(where: { $0.environment == variable }) else { return variable }
            func isSet(_ value: String?) -> Bool { !(value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true) }
            if isSet(flags[setting.key]), let flag = setting.flag { return flag }
            if isSet(environment[variable]) { return variable }
            if let file, resolved[variable] != nil { return "\(setting.key) in \(file)" }
            return variable
        }
    }

    /// Every setting read as text, by its `HERALD_*` name, and parsed after, one way for every
    /// layer: a YAML `8080` and an environment "8080" must mean, and fail, the same.
    static func values(from reader: ConfigReader) -> [String: String] {
        var values: [String: String] = [:]
        for setting in settings {
            if let value = reader.string(forKey: ConfigKey(setting.key)) { values[setting.environment] = value }
        }
        return values
    }

    /// Builds the configuration from resolved values (by `HERALD_*` name): the same checks
    /// whichever layer a value came from, each error naming it (`source`, by `HERALD_*` name).
    public init(values: [String: String], source: @escaping @Sendable (String) -> String = { $0 }) throws {
        func text(_ key: String) -> String? {
            guard let value = values[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        func int(_ key: String) throws -> Int? { try text(key).map { try Self.positiveInt($0, source: source(key)) } }
        func bool(_ key: String) throws -> Bool? { try text(key).map { try Self.bool($0, source: source(key)) } }
        let host = text("HERALD_HOST") ?? Self.defaultHost
        let port = try int("HERALD_PORT") ?? Self.defaultPort
        database = text("HERALD_DATABASE") ?? Self.defaultDatabase
        let levelText = text("HERALD_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else {
            throw Invalid("\(source("HERALD_LOG_LEVEL")) must be one of trace, debug, info, notice, warning, error, critical")
        }
        logLevel = level
        do {
            providers = try ProviderSettings(environment: values, source: source)
        } catch {
            throw Invalid("\(error)")
        }
        let publicURL = text("HERALD_PUBLIC_URL") ?? "http://\(host):\(port)"
        guard let url = URL(string: publicURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw Invalid("\(source("HERALD_PUBLIC_URL")) must be an http or https URL, not '\(publicURL)'")
        }
        func seconds(_ key: String) throws -> Duration? { try int(key).map { .seconds($0) } }
        var dispatcher = Self.defaultDispatcher
        if let sends = try int("HERALD_MAX_CONCURRENT_SENDS") { dispatcher.maxConcurrentSends = sends }
        // Intake leases the jobs it hands straight to the dispatcher for as long.
        if let lease = try seconds("HERALD_LEASE_SECONDS") { dispatcher.lease = lease }
        dispatcher.maxJobsInMemory = try int("HERALD_MAX_JOBS_IN_MEMORY")
        var intake = Self.defaultIntake
        if let maxPending = try int("HERALD_MAX_PENDING_WEBHOOKS") { intake.maxPending = maxPending }
        var settings = Self.defaultSettings
        settings.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        if let value = try bool("HERALD_ACCEPT_RAW_TOKENS") { settings.acceptRawTokens = value }
        if let value = text("HERALD_REGISTRATION") {
            guard let mode = RegistrationMode(rawValue: value.lowercased()) else {
                throw Invalid("\(source("HERALD_REGISTRATION")) must be open, challenge or key, not '\(value)'")
            }
            settings.registration = mode
        }
        if let value = try seconds("HERALD_JOB_TTL") { settings.jobTTL = value }
        if let value = try int("HERALD_REGISTRATIONS_PER_MINUTE") { settings.registrationsPerMinute = value }
        if let value = text("HERALD_TRUSTED_PROXIES") {
            do {
                settings.trustedProxies = try TrustedProxies(parsing: value)
            } catch {
                throw Invalid("\(source("HERALD_TRUSTED_PROXIES")): \(error.description)")
            }
        }
        if let value = try int("HERALD_TARGET_PUSHES_PER_MINUTE") { settings.targetPushesPerMinute = value }
        if let value = try int("HERALD_TARGET_PUSH_BURST") { settings.targetPushBurst = value }
        if let value = try seconds("HERALD_REPLY_TIMEOUT") { settings.replyTimeout = value }
        if let value = try int("HERALD_MAX_HELD_REPLIES") { settings.maxHeldReplies = value }
        settings.localProvider = providers.usesLocal
        settings.localWebPush = providers.isLocal
        settings.webPush = providers.webPushPolicy
        try settings.readRooms(from: SettingsReader(reader: Self.reader(values: values), publicURL: settings.publicURL, source: source))
        // NWC's subscriptions connect through the same egress as every other connection.
        settings.nwc.relays.extraTrustRootsPEMFile = providers.extraTrustRootsFile
        settings.nwc.relays.proxy = providers.proxy
        if let file = text("HERALD_NOSTR_SECRET_KEY_FILE") {
            let key: NostrSecretKey
            do {
                key = try NostrSecretKey(text: String(contentsOfFile: file, encoding: .utf8))
            } catch let error as NostrSecretKey.Invalid {
                throw Invalid("\(source("HERALD_NOSTR_SECRET_KEY_FILE")): \(error.description)")
            } catch {
                throw Invalid("\(source("HERALD_NOSTR_SECRET_KEY_FILE")): cannot read '\(file)'")
            }
            let allowPrivate = try bool("HERALD_NOSTR_ALLOW_PRIVATE_RELAYS") ?? false
            settings.zaps = ZapSettings(key: key, allowPrivateRelays: allowPrivate)
            providers.relays = NostrRelayProvider.Configuration(allowPrivateRelays: allowPrivate)
        }
        settings.wakeGateway.audience = text("HERALD_WAKE_GATEWAY_AUDIENCE")
        var edge = Self.defaultEdge
        if let value = try seconds("HERALD_IDLE_TIMEOUT") { edge.idleTimeout = value }
        if let value = try seconds("HERALD_REQUEST_READ_TIMEOUT") { edge.requestReadTimeout = value }
        if let value = try int("HERALD_MAX_CONNECTIONS") { edge.maxConnections = value }
        server = HeraldServerConfiguration(host: host, port: port, settings: settings, intake: intake, dispatcher: dispatcher, edge: edge)
    }

    /// A setting's value that must be a positive integer; `source` names where it came from.
    static func positiveInt(_ text: String, source: String) throws -> Int {
        guard let value = Int(text), value > 0 else { throw Invalid("\(source) must be a positive integer, not '\(text)'") }
        return value
    }

    /// A setting's value that must be true or false; `source` names where it came from.
    static func bool(_ text: String, source: String) throws -> Bool {
        guard let parsed = parseBool(text) else { throw Invalid("\(source) must be true or false, not '\(text.lowercased())'") }
        return parsed
    }

    /// A true-or-false setting as every layer may write it; nil for anything else.
    static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }

    /// A database URL with any password replaced: summaries and logs never carry it.
    static func redactingPassword(_ database: String) -> String {
        guard var components = URLComponents(string: database), components.password != nil else { return database }
        components.password = "…"
        // Shown to people, not parsed: the ellipsis as itself, not `%E2%80%A6`.
        return components.string?.replacingOccurrences(of: "%E2%80%A6", with: "…") ?? "(a database URL)"
    }

    /// A summary for `herald config check` and the start-up log: no secret in it (key files
    /// are named, never read out).
    public var summary: [(String, String)] {
        var lines: [(String, String)] = [
            ("listen", "\(server.host):\(server.port)"),
            ("public url", server.settings.publicURL),
            ("registration", server.settings.registration.rawValue),
            ("database", Self.redactingPassword(database)),
        ]
        if providers.isLocal {
            lines.append(("apps", "default: local development provider (ios, android, webpush)"))
        }
        for (name, app) in providers.apps.sorted(by: { $0.key < $1.key }) where app.hasCredentials {
            let absent = providers.isLocalMobile ? "local" : "none"
            let ios = app.apns.map { "APNs, topic \($0.topic), key \($0.keyID), \($0.environment)" } ?? absent
            let android = app.fcm.map { "FCM, project \($0.serviceAccount.projectID)" } ?? absent
            let webpush = app.webPush.map { "Web Push, contact \($0.contact)" } ?? "none"
            lines.append(("app \(name)", "ios: \(ios); android: \(android); webpush: \(webpush)"))
        }
        if !server.settings.trustedProxies.isEmpty { lines.append(("trusted proxies", server.settings.trustedProxies.description)) }
        if let proxy = providers.proxy { lines.append(("https proxy", proxy.description)) }
        if let zaps = server.settings.zaps { lines.append(("zaps", "on, nostrPubkey \(zaps.key.publicKeyHex)")) }
        if server.settings.breez.webhookSecret != nil { lines.append(("breez payments", "on, POST /api/v1/breez/payments")) }
        for topic in server.settings.wakeGateway.topics.values.sorted(by: { $0.name < $1.name }) {
            let fallback = topic.alertable ? ", fallback after \(topic.fallbackAfterSeconds) s" : ""
            lines.append(("wake topic \(topic.name)", "\(topic.urgency.rawValue), deadline \(topic.deadlineSeconds) s\(fallback)"))
        }
        if let file { lines.append(("file", file)) }
        return lines
    }
}
