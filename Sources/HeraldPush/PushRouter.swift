import HeraldWire
import Logging

/// The provider for each app and platform, chosen by the target: APNs (or local) for iOS, FCM
/// (or local) for Android, Web Push (or local) for `webpush`, with the credentials of the target's app. A platform without a
/// provider, or an app not configured, refuses its messages.
public struct PushRouter: PushProvider {
    public var name: String { "router" }

    /// One app's providers.
    public struct App: Sendable {
        public var ios: (any PushProvider)?
        public var android: (any PushProvider)?
        public var webpush: (any PushProvider)?
        public init(ios: (any PushProvider)?, android: (any PushProvider)?, webpush: (any PushProvider)? = nil) {
            self.ios = ios
            self.android = android
            self.webpush = webpush
        }
    }

    /// The apps by name.
    public let apps: [String: App]
    /// Where zap receipts go, for every app: Nostr relays.
    public let relays: (any PushProvider)?
    /// Where forwarded NWC requests go, for every app: other services' webhooks.
    public let webhooks: (any PushProvider)?
    /// Where BIP-353 records go, for every app: a DNS server.
    public let dns: (any PushProvider)?

    public init(
        apps: [String: App], relays: (any PushProvider)? = nil, webhooks: (any PushProvider)? = nil, dns: (any PushProvider)? = nil
    ) {
        self.apps = apps
        self.relays = relays
        self.webhooks = webhooks
        self.dns = dns
    }

    /// The same apps, publishing to Nostr relays through `relays`.
    public func publishing(to relays: any PushProvider) -> PushRouter {
        PushRouter(apps: apps, relays: relays, webhooks: webhooks, dns: dns)
    }

    /// The same apps, forwarding to webhooks through `webhooks`.
    public func forwarding(to webhooks: any PushProvider) -> PushRouter {
        PushRouter(apps: apps, relays: relays, webhooks: webhooks, dns: dns)
    }

    /// The same apps, writing BIP-353 records through `dns`.
    public func updatingDNS(through dns: any PushProvider) -> PushRouter {
        PushRouter(apps: apps, relays: relays, webhooks: webhooks, dns: dns)
    }

    /// A single app, named ``PushTarget/defaultApp``.
    public init(ios: (any PushProvider)?, android: (any PushProvider)?, webpush: (any PushProvider)? = nil) {
        self.init(apps: [PushTarget.defaultApp: App(ios: ios, android: android, webpush: webpush)])
    }

    /// One provider for every platform of the default app (the local development provider).
    public init(both provider: any PushProvider) {
        self.init(ios: provider, android: provider, webpush: provider)
    }

    /// Whether `app` is configured: what registration and webhooks check before storing.
    public func knows(app: String) -> Bool { apps[app] != nil }

    public func provider(for platform: Platform, app: String = PushTarget.defaultApp) -> (any PushProvider)? {
        provider(for: .device(platform), app: app)
    }

    public func provider(for destination: JobDestination, app: String = PushTarget.defaultApp) -> (any PushProvider)? {
        switch destination {
        case .device(.ios): apps[app]?.ios
        case .device(.android): apps[app]?.android
        case .device(.webpush): apps[app]?.webpush
        case .nostr: apps[app] == nil ? nil : relays
        case .webhook: apps[app] == nil ? nil : webhooks
        case .dns: apps[app] == nil ? nil : dns
        }
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard knows(app: target.app) else {
            throw PushValidationError(.unknownApp, message: "no app named '\(target.app)' is configured")
        }
        guard let provider = provider(for: target.destination, app: target.app) else {
            throw PushValidationError(
                .platformNotConfigured,
                message: "no push provider is configured for \(target.destination.rawValue)"
                    + (target.app == PushTarget.defaultApp ? "" : " in app '\(target.app)'")
            )
        }
        try provider.validate(message, for: target)
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        guard knows(app: target.app) else {
            return PushOutcome(kind: .permanent, reason: ErrorCode.unknownApp.rawValue)
        }
        guard let provider = provider(for: target.destination, app: target.app) else {
            return PushOutcome(kind: .permanent, reason: ErrorCode.platformNotConfigured.rawValue)
        }
        guard let prelude = message.prelude, !prelude.isEmpty else {
            return await provider.send(message, to: target, logger: logger)
        }
        var main = message
        main.prelude = nil
        let outcomes = await provider.send(inOrder: prelude + [main], to: target, logger: logger)
        // The prelude is best effort (a silent push APNs may throttle): its failures are logged
        // by the provider, and only the message's own outcome decides the job. What the local
        // provider rendered for each is kept all the same.
        guard var outcome = outcomes.last else { return PushOutcome(kind: .retry, reason: "not_sent") }
        if outcomes.count > 1 { outcome.recorded = outcomes.flatMap(\.recorded) }
        return outcome
    }
}
