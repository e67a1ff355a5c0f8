import Foundation
import HeraldPush
import HeraldWire
import Logging
import NIOCore

/// Push credentials and the egress: each app's APNs key, FCM service account and VAPID key, the
/// trust roots and the HTTPS proxy. Read like every setting (a flag where there is one, a
/// `HERALD_*` variable, the configuration file; ``HeraldConfiguration/settings`` lists them),
/// except that secrets come only from files named in the variables or the file, never from
/// flags (flags show up in `ps`).
public struct ProviderSettings: Sendable {
    /// One app's credentials: an APNs key and topic, an FCM service account, a VAPID key for Web
    /// Push, or any of them together.
    public struct App: Sendable {
        public var apns: APNsConfiguration?
        public var fcm: FCMConfiguration?
        public var webPush: WebPushConfiguration?
        public init(apns: APNsConfiguration? = nil, fcm: FCMConfiguration? = nil, webPush: WebPushConfiguration? = nil) {
            self.apns = apns
            self.fcm = fcm
            self.webPush = webPush
        }

        /// Whether any platform has credentials.
        public var hasCredentials: Bool { apns != nil || fcm != nil || webPush != nil }
    }

    /// The apps by name: `default` from the `HERALD_APNS_*` / `HERALD_FCM_*` settings, the rest
    /// from the configuration file's `apps` section.
    public var apps: [String: App] = [:]
    public var extraTrustRootsFile: String?
    /// Connections per push origin; Apple asks for few, long-lived ones.
    public var connectionsPerOrigin = 1
    /// Which Web Push endpoints may be reached, for every app.
    public var webPushPolicy = WebPushPolicy()
    /// The https URL a declarative Web Push notification opens (`webpush.navigate_url`, else
    /// `public_url` when that is https); nil sends declarative subscriptions the plain form.
    public var webPushNavigateURL: String?
    /// The HTTPS proxy outgoing connections go through.
    public var proxy: EgressProxy?
    /// Publishing zap receipts, when zaps are on; its trust roots and proxy are the ones above.
    public var relays: NostrRelayProvider.Configuration?

    /// The default app's APNs credentials.
    public var apns: APNsConfiguration? {
        get { apps[PushTarget.defaultApp]?.apns }
        set { apps[PushTarget.defaultApp, default: App()].apns = newValue }
    }
    /// The default app's FCM credentials.
    public var fcm: FCMConfiguration? {
        get { apps[PushTarget.defaultApp]?.fcm }
        set { apps[PushTarget.defaultApp, default: App()].fcm = newValue }
    }

    /// The default app's Web Push identity.
    public var webPush: WebPushConfiguration? {
        get { apps[PushTarget.defaultApp]?.webPush }
        set { apps[PushTarget.defaultApp, default: App()].webPush = newValue }
    }

    /// True when no app has credentials: the local development provider is used.
    public var isLocal: Bool { apps.values.allSatisfy { !$0.hasCredentials } }

    /// `local_provider`: false keeps the local development provider off platforms without
    /// credentials (a Web-Push-only deployment that must refuse iOS and Android devices).
    public var localProviderAllowed = true

    /// True when Web Push has credentials and neither APNs nor FCM has: a development setup
    /// that added Web Push. iOS and Android stay on the local development provider then,
    /// rather than turning off (a deployment with APNs or FCM anywhere has no local platform),
    /// unless `local_provider` is false.
    public var isLocalMobile: Bool {
        localProviderAllowed && !isLocal && apps.values.allSatisfy { $0.apns == nil && $0.fcm == nil }
    }

    /// Whether any platform is served by the local development provider.
    public var usesLocal: Bool { isLocal || isLocalMobile }

    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    /// The settings of one app's credentials, relative to the app (`apns.key_file`): for the
    /// `default` app under the top level (`HERALD_APNS_KEY_FILE`), for a named one under
    /// `apps.<name>.` in the configuration file.
    static let apnsRequired = ["apns.key_file", "apns.key_id", "apns.team_id", "apns.topic"]
    static let appKeys =
        apnsRequired + [
            "apns.environment", "apns.url", "fcm.service_account_file", "fcm.url", "webpush.vapid_key_file", "webpush.contact",
        ]

    /// Reads the settings from resolved values by `HERALD_*` name. A platform with some but not
    /// all of its settings is an error that names what is missing: a half-configured platform
    /// must not silently fall back.
    ///
    /// - Parameter source: Where a value came from, by `HERALD_*` name, for errors.
    public init(environment: [String: String], source: (String) -> String = { $0 }) throws {
        func variable(_ key: String) -> String { "HERALD_" + key.uppercased().replacingOccurrences(of: ".", with: "_") }
        func value(_ key: String) -> String? {
            guard let v = environment[variable(key)]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        extraTrustRootsFile = value("tls.ca_file")
        if let connections = value("apns.connections") {
            guard let n = Int(connections), (1...64).contains(n) else {
                throw Missing(description: "\(source("HERALD_APNS_CONNECTIONS")) must be a whole number from 1 to 64, not '\(connections)'")
            }
            connectionsPerOrigin = n
        }
        func flag(_ key: String) throws -> Bool {
            guard let text = value(key) else { return false }
            guard let parsed = HeraldConfiguration.parseBool(text) else {
                throw Missing(description: "\(source(variable(key))) must be true or false, not '\(text.lowercased())'")
            }
            return parsed
        }
        if value("local_provider") != nil { localProviderAllowed = try flag("local_provider") }
        webPushPolicy.allowInsecureEndpoints = try flag("webpush.allow_insecure_endpoints")
        webPushPolicy.allowPrivateEndpoints = try flag("webpush.allow_private_endpoints")
        if let text = value("webpush.concurrency_per_origin") {
            guard let n = Int(text), (1...1000).contains(n) else {
                throw Missing(
                    description: "\(source(variable("webpush.concurrency_per_origin"))) must be a whole number from 1 to 1000, not '\(text)'")
            }
            webPushPolicy.concurrencyPerOrigin = n
        }
        if let url = value("webpush.navigate_url") {
            guard Self.isHTTPSURL(url) else {
                throw Missing(description: "\(source(variable("webpush.navigate_url"))) must be an https URL with a host, not '\(url)'")
            }
            webPushNavigateURL = url
        } else if let url = value("public_url"), Self.isHTTPSURL(url) {
            webPushNavigateURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        if let url = value("https_proxy") {
            var proxyEnvironment = ["HERALD_HTTPS_PROXY": url]
            proxyEnvironment["NO_PROXY"] = value("no_proxy")
            do {
                proxy = try EgressProxy.from(environment: proxyEnvironment)
            } catch {
                throw Missing(description: error.description.replacingOccurrences(of: "HERALD_HTTPS_PROXY", with: source("HERALD_HTTPS_PROXY")))
            }
        }
        let app = try App(reading: value, naming: { source(variable($0)) })
        if app.hasCredentials { apps[PushTarget.defaultApp] = app }
        if !localProviderAllowed, isLocal {
            throw Missing(
                description: "\(source(variable("local_provider"))) is false, but no push credentials are configured: nothing could be delivered")
        }
    }
}

extension ProviderSettings {
    /// WebKit opens a declarative notification's `navigate` only when it is https.
    static func isHTTPSURL(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else { return false }
        return url.user == nil && url.password == nil
    }

    /// What `config check` and the start-up log say about the settings without refusing them.
    var warnings: [String] {
        guard webPushNavigateURL == nil, apps.values.contains(where: { $0.webPush != nil }) else { return [] }
        return [
            "Web Push subscriptions that ask for the declarative form get the plain one: public_url is not https; set webpush.navigate_url to the https URL a notification opens"
        ]
    }
}

extension ProviderSettings.App {
    /// One app's credentials, each setting read by `value` (by its key relative to the app,
    /// ``ProviderSettings/appKeys``) and named in errors by `name`: the same reading and checks
    /// for the default app and every named one, whichever layer the values came from.
    init(reading value: (String) -> String?, naming name: (String) -> String) throws {
        typealias Missing = ProviderSettings.Missing
        let present = ProviderSettings.appKeys.filter { value($0) != nil }
        if present.contains(where: { $0.hasPrefix("apns.") }) {
            let missing = ProviderSettings.apnsRequired.filter { value($0) == nil }
            guard missing.isEmpty else {
                throw Missing(description: "APNs is partly configured: set \(missing.map(name).joined(separator: ", "))")
            }
            let keyFile = value("apns.key_file")!
            let pem: String
            do {
                pem = try String(contentsOfFile: keyFile, encoding: .utf8)
            } catch {
                throw Missing(description: "\(name("apns.key_file")): cannot read '\(keyFile)'")
            }
            let environmentName = value("apns.environment") ?? "production"
            var apnsEnvironment: APNsConfiguration.Environment
            switch environmentName {
            case "production": apnsEnvironment = .production
            case "sandbox", "development": apnsEnvironment = .sandbox
            default:
                throw Missing(description: "\(name("apns.environment")) must be 'production' or 'sandbox', not '\(environmentName)'")
            }
            if let url = value("apns.url") { apnsEnvironment = .custom(url) }
            apns = APNsConfiguration(
                signingKeyPEM: pem, keyID: value("apns.key_id")!, teamID: value("apns.team_id")!, topic: value("apns.topic")!,
                environment: apnsEnvironment
            )
        }
        if let file = value("fcm.service_account_file") {
            let account: ServiceAccount
            do {
                account = try ServiceAccount(json: Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw Missing(description: "\(name("fcm.service_account_file")): '\(file)' is not a readable service-account JSON")
            }
            fcm = FCMConfiguration(serviceAccount: account, baseURL: value("fcm.url") ?? FCMConfiguration.defaultBaseURL)
        } else if value("fcm.url") != nil {
            throw Missing(description: "FCM is partly configured: set \(name("fcm.service_account_file"))")
        }
        if let file = value("webpush.vapid_key_file") {
            guard let contact = value("webpush.contact") else {
                throw Missing(description: "Web Push is partly configured: set \(name("webpush.contact")) (mailto: or https:)")
            }
            let pem: String
            do {
                pem = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw Missing(description: "\(name("webpush.vapid_key_file")): cannot read '\(file)'")
            }
            let configuration = WebPushConfiguration(vapidKeyPEM: pem, contact: contact)
            // Checked now, so a bad key or contact fails at start-up rather than at each push.
            do {
                _ = try VAPIDSigner(privateKeyPEM: pem, contact: contact)
            } catch {
                throw Missing(description: "\(name("webpush.vapid_key_file")) / \(name("webpush.contact")): \(error.message)")
            }
            webPush = configuration
        } else if value("webpush.contact") != nil {
            throw Missing(description: "Web Push is partly configured: set \(name("webpush.vapid_key_file"))")
        }
    }
}

extension ProviderSettings {
    /// The push client for these settings: trust roots read now, connections opened on first use.
    /// `localLoops`: see ``PushHTTPClient/init(configuration:eventLoopGroup:localLoops:logger:)``.
    public func makeHTTPClient(logger: Logger, localLoops: [any EventLoop] = []) throws -> PushHTTPClient {
        try PushHTTPClient(
            configuration: .init(
                extraTrustRootsPEMFile: extraTrustRootsFile, connectionsPerOrigin: connectionsPerOrigin, proxy: proxy,
                allowPrivateWebPushEndpoints: webPushPolicy.allowPrivateEndpoints),
            localLoops: localLoops,
            logger: logger
        )
    }

    /// The providers for these settings. `recordLocal` keeps what the local provider sends;
    /// without it, each push rides on its outcome and the outbox stores it with that outcome
    /// (``PushOutcome/recorded``), as `herald serve` does.
    /// With `sharing`, each key's provider token is shared through the database with every
    /// process on it (and between apps of this process that use the same key).
    public func makeRouter(
        httpClient: PushHTTPClient,
        recordLocal: LocalDevelopmentProvider.Recorder? = nil,
        sharing: TokenSharing? = nil,
        logger: Logger
    ) throws -> PushRouter {
        let relays = try self.relays.map { relays in
            var configuration = relays
            configuration.extraTrustRootsPEMFile = extraTrustRootsFile
            configuration.proxy = proxy
            return try NostrRelayProvider(configuration: configuration)
        }
        // Forwarded NWC requests go out under Web Push's rules: https, public addresses.
        let webhooks = WebhookForwardProvider(httpClient: httpClient, policy: webPushPolicy)
        if isLocal {
            let router = PushRouter(both: LocalDevelopmentProvider(recorder: recordLocal, webPushNavigateURL: webPushNavigateURL))
                .forwarding(to: webhooks)
            return relays.map { router.publishing(to: $0) } ?? router
        }
        var router: [String: PushRouter.App] = [:]
        let local: (any PushProvider)? = isLocalMobile ? LocalDevelopmentProvider(recorder: recordLocal) : nil
        for (name, app) in apps {
            do {
                router[name] = PushRouter.App(
                    ios: try app.apns.map { try APNsProvider(configuration: $0, httpClient: httpClient, sharing: sharing) } ?? local,
                    android: try app.fcm.map { try FCMProvider(configuration: $0, httpClient: httpClient, sharing: sharing) } ?? local,
                    webpush: try app.webPush.map {
                        try WebPushProvider(configuration: $0, policy: webPushPolicy, navigateURL: webPushNavigateURL, httpClient: httpClient)
                    }
                )
            } catch {
                throw PushConfigurationError(message: "app '\(name)': \(error)")
            }
        }
        return PushRouter(apps: router, relays: relays, webhooks: webhooks)
    }
}
