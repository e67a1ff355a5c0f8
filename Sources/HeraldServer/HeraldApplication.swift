import Foundation
import HeraldDNS
import HeraldPush
import HeraldStore
import Hummingbird
import Logging
import ServiceLifecycle

/// Everything `herald serve` runs: the HTTP server, the intake writer and the dispatcher.
public struct HeraldServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var settings: ServerSettings
    public var intake: IntakeConfiguration
    public var dispatcher: DispatcherConfiguration
    public var edge: EdgeLimits
    /// Wake repetition, waking window and the default wake-to-presence time.
    public var presence: PresenceRegistry.Configuration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        settings: ServerSettings,
        intake: IntakeConfiguration = .init(),
        dispatcher: DispatcherConfiguration = .init(),
        edge: EdgeLimits = .init(),
        presence: PresenceRegistry.Configuration = .init()
    ) {
        self.host = host
        self.port = port
        self.settings = settings
        self.intake = intake
        self.dispatcher = dispatcher
        self.edge = edge
        self.presence = presence
    }
}

/// A method and path the router answers, as the OpenAPI document writes them (`/api/v1/devices/{id}`).
public struct RegisteredRoute: Hashable, Sendable, CustomStringConvertible {
    public var method: String
    public var path: String
    public var description: String { "\(method) \(path)" }
}

/// Builds the NDS application on any store. Dependencies come in; nothing is reached for globally.
/// What the store needs running (``HeraldStoreBackend/services(logger:)``) starts first and stops
/// last, after the final writes.
public func buildApplication(
    configuration: HeraldServerConfiguration,
    store: some HeraldStoreBackend,
    providers: PushRouter,
    metrics: HeraldMetrics = HeraldMetrics(),
    now: @escaping @Sendable () -> Date = { Date() },
    clock: any Clock<Duration> = ContinuousClock(),
    logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    routesRegistered: @Sendable ([RegisteredRoute]) -> Void = { _ in }
) -> some ApplicationProtocol {
    // What several processes on one database must agree on goes through it; nil for SQLite.
    let shared = store.sharing.capabilities
    // BIP-353 records go through the outbox to the DNS server, like pushes to their services.
    let providers =
        configuration.settings.bip353.map {
            providers.updatingDNS(through: Bip353Publisher(settings: $0, store: store, client: DNSClient(), now: now))
        }
        ?? providers
    var dispatcherConfiguration = configuration.dispatcher
    // Leases found at start are this process's own only when no other process writes the database.
    if shared != nil { dispatcherConfiguration.releaseLeasesAtStart = false }
    let dispatcher = OutboxDispatcher(
        store: store,
        providers: providers,
        metrics: metrics,
        configuration: dispatcherConfiguration,
        now: now,
        clock: clock,
        logger: logger.with(component: "dispatcher")
    )
    let intake = OutboxIntake(
        store: store,
        dispatcher: dispatcher,
        lease: configuration.dispatcher.lease,
        configuration: configuration.intake,
        now: now,
        logger: logger.with(component: "intake")
    )

    let relay = ReplyRelay(
        store: store, otherProcesses: shared, settings: configuration.settings, now: now, clock: clock,
        logger: logger.with(component: "relay"))

    let targets = TargetLimiter(
        local: RateLimiter(
            perMinute: configuration.settings.targetPushesPerMinute, burst: configuration.settings.targetPushBurst, now: now
        ),
        shared: shared
    )

    // With several instances on the database, presence is mirrored between them.
    var presenceConfiguration = configuration.presence
    // Streams never take more than half the connections: /health and payers keep the rest.
    presenceConfiguration.maxStreams = min(presenceConfiguration.maxStreams, max(1, configuration.edge.maxConnections / 2))
    let presence = PresenceRegistry(configuration: presenceConfiguration, shared: shared != nil) { took in
        metrics.wakeToPresence.record(.milliseconds(Int64((took * 1000).rounded())))
    }

    // Every push a route causes goes through the one delivery; wakes through the wake service.
    let directory = DeviceDirectory(
        devices: store, identities: store, challenges: store, providers: providers, settings: configuration.settings)
    let delivery = PushDelivery(
        intake: intake, relay: relay, devices: store, directory: directory, providers: providers, targets: targets, metrics: metrics,
        settings: configuration.settings, now: now
    )
    let nwcWatcher = NwcWatcher(
        store: store, delivery: delivery, settings: configuration.settings, metrics: metrics, lease: configuration.dispatcher.lease,
        now: now, clock: clock, logger: logger.with(component: "nwc"))
    let router = buildRouter(
        ServerParts(
            settings: configuration.settings, store: store, providers: providers, metrics: metrics, relay: relay, presence: presence,
            directory: directory, delivery: delivery,
            wakes: WakeService(
                delivery: delivery, presence: presence, metrics: metrics, settings: configuration.settings, now: now, claims: shared,
                ledger: store),
            nwcWatcher: nwcWatcher, registrationsPerMinute: configuration.settings.registrationsPerMinute,
            replayed: { dispatcher.deferred() }, now: now, clock: clock, logger: logger))
    routesRegistered(router.routes.map { RegisteredRoute(method: $0.method.rawValue, path: $0.path.description) })

    var app = Application(
        router: router,
        server: configuration.edge.serverBuilder(),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
        logger: logger
    )
    // Order matters for shutdown, which runs in reverse: the HTTP server stops first (and
    // finishes its requests), then intake commits what they submitted, then the dispatcher
    // finishes its sends. The relay stops next: requests still held need its polling. The
    // store's own services go last, after the final writes.
    app.addServices(store.services(logger: logger.with(component: "store")))
    app.addServices(relay, dispatcher, intake)
    // Stops first: no event is taken once intake has stopped taking pushes.
    app.addServices(nwcWatcher)
    if let shared {
        app.addServices(PresenceMirror(registry: presence, store: shared, now: now, clock: clock, logger: logger.with(component: "presence")))
    }
    return app
}

/// What the rooms' routes are made from: the settings, the store and the services
/// ``buildApplication`` started.
struct ServerParts<Store: HeraldStoreBackend>: Sendable {
    let settings: ServerSettings
    let store: Store
    let providers: PushRouter
    let metrics: HeraldMetrics
    let relay: ReplyRelay
    let presence: PresenceRegistry
    let directory: DeviceDirectory
    let delivery: PushDelivery
    let wakes: WakeService
    let nwcWatcher: NwcWatcher
    let registrationsPerMinute: Int
    /// Tells the dispatcher that replayed jobs wait in the store.
    let replayed: @Sendable () -> Void
    let now: @Sendable () -> Date
    let clock: any Clock<Duration>
    let logger: Logger

    /// A registration route's own allowance per client address.
    func registrationLimiter() -> RateLimiter { RateLimiter(perMinute: registrationsPerMinute, now: now) }
}

/// Registers every room's routes, one statement a room, behind the edge's middleware.
func buildRouter<Store: HeraldStoreBackend>(_ parts: ServerParts<Store>) -> Router<HeraldRequestContext> {
    let (settings, store, delivery, providers, metrics, now, clock) =
        (parts.settings, parts.store, parts.delivery, parts.providers, parts.metrics, parts.now, parts.clock)
    let router = Router(context: HeraldRequestContext.self)
    router.add(middleware: ClientAddressMiddleware(resolver: ClientAddressResolver(trusted: settings.trustedProxies)))
    router.add(middleware: JSONErrorMiddleware())
    router.add(middleware: FormQueryMiddleware())
    let api = router.group("api/v1")
    let activities = SwapActivities(
        store: store, delivery: delivery, settings: settings, metrics: metrics, now: now,
        logger: parts.logger.with(component: "live-activities"))
    let bip353 = settings.bip353.map { Bip353Names(settings: $0, store: store, delivery: delivery, now: now) }
    WebhookRoutes(
        delivery: delivery, devices: store, providers: providers, settings: settings,
        lsps5: LSPS5Intake(store: store, wakes: parts.wakes, metrics: metrics, now: now), activities: activities
    ).register(on: api)
    LiveActivityRoutes(devices: store, activities: store, now: now).register(on: api)
    BreezPaymentRoutes(delivery: delivery, settings: settings, metrics: metrics).register(on: api)
    ReplyRoutes(relay: parts.relay, settings: settings).register(on: api)
    LightningAddressRoutes(
        devices: store, addresses: store, cache: store, settings: settings, challenges: store, now: now, bip353: bip353
    ).register(on: api)
    LnurlPayRoutes(
        addresses: store, devices: store, cache: store, delivery: delivery, settings: settings,
        zaps: ZapReceipts(zaps: store, delivery: delivery, settings: settings, now: now), now: now
    ).register(on: router)
    DeviceRoutes(
        devices: store, localPushes: store, keys: store, challenges: store, replays: store, delivery: delivery, settings: settings,
        providers: providers, limiter: parts.registrationLimiter(), now: now, clock: clock, ledger: store, liveActivities: store,
        bip353: bip353
    ).register(on: api)
    PresenceRoutes(devices: store, presence: parts.presence, settings: settings, now: now, clock: clock, wakes: parts.wakes)
        .register(on: api)
    WakeRoutes(wakes: parts.wakes, devices: store, keys: store, providers: providers, metrics: metrics, now: now).register(on: api)
    WakeGatewayRoutes(
        wakes: parts.wakes, devices: store, keys: store, replays: store, challenges: store, ledger: store, providers: providers,
        settings: settings, limiter: parts.registrationLimiter(), now: now
    ).register(on: router)
    NwcRoutes(
        store: store, watcher: parts.nwcWatcher, directory: parts.directory, settings: settings, limiter: parts.registrationLimiter(),
        now: now
    ).register(on: router)
    BackendRoutes(delivery: delivery, store: store, providers: providers, settings: settings, now: now).register(on: api)
    AdminRoutes(store: store, keys: store, replayed: parts.replayed, now: now).register(on: api)
    DashboardRoutes(
        store: store, keys: store, metrics: metrics, providers: providers, relay: parts.relay, settings: settings,
        replayed: parts.replayed, now: now
    ).register(on: router)
    OperationsRoutes(store: store, providers: providers, metrics: metrics).register(on: router)
    OpenAPIRoutes().register(on: router)
    return router
}

extension Logger {
    func with(component: String) -> Logger {
        var logger = self
        logger[metadataKey: "component"] = "\(component)"
        return logger
    }
}
