import Foundation
import HeraldNostr
import HeraldPush
import HeraldStore
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Watches the relays of every NWC registration and wakes the wallet when an app asks it
/// something (NIP-47): per relay, filters naming many wallet service keys (`kinds [23194]`,
/// `#p [keys…]`, `since` when Herald last forwarded one of them, less a margin) in few
/// subscriptions per connection (``RelayLayout``). Every event is
/// checked (its id and BIP-340 signature, an author the wallet registered, a NIP-40 expiration
/// not passed), claimed once in the store (the same event from three relays, or three
/// instances, is one push), and pushed as `nwc_event` through the outbox. Its waits (settling,
/// reconnects, lease renewals, purges) run on the server's clock.
final class NwcWatcher: Service, Sendable {
    let store: any NwcStore
    let delivery: PushDelivery
    let subscriber: NostrRelaySubscriber?
    let settings: ServerSettings
    let metrics: HeraldMetrics
    let now: @Sendable () -> Date
    let clock: any Clock<Duration>
    let logger: Logger

    /// How long registration changes gather before the subscriptions follow them.
    static let settle: Duration = .milliseconds(250)
    /// A reconnect waits this long at first, doubling to ``maxBackoff``, with jitter.
    static let firstBackoff: Duration = .milliseconds(500)
    static let maxBackoff: Duration = .seconds(60)
    /// A connection that lasted this long was no flapping one: the next reconnect waits
    /// ``firstBackoff`` again.
    static let steadyConnection: Duration = .seconds(30)
    /// How far before the last forwarded event a new subscription starts: relays' clocks and
    /// events published late.
    static let sinceMargin: Int64 = 120
    /// Forwarded events are remembered (and so deduplicated) this long; registrations unused
    /// this long are cleared.
    static let seenFor: TimeInterval = 7 * 86_400
    static let unusedFor: TimeInterval = 30 * 86_400
    /// This instance, as the subscription leases name it.
    let instance = UUID().uuidString.lowercased()
    /// How long a wallet's subscription is leased to the instance running it: another takes it
    /// over within this after that instance dies. Renewed (and other instances' registrations
    /// read) every third of it.
    let lease: Duration

    /// The registrations as last read, by (wallet service, app): what each event is forwarded by,
    /// without reading every registration per event. One per node key that registered the pair:
    /// each goes to its own webhook, none in another's place.
    private let known = NIOLockedValueBox<[String: [NwcRegistration]]>([:])
    private let changed: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    init(
        store: any NwcStore, delivery: PushDelivery, settings: ServerSettings, metrics: HeraldMetrics, lease: Duration = .seconds(60),
        now: @escaping @Sendable () -> Date, clock: any Clock<Duration>, logger: Logger
    ) {
        self.lease = lease
        self.store = store
        self.delivery = delivery
        self.subscriber = try? NostrRelaySubscriber(configuration: settings.nwc.relays)
        self.settings = settings
        self.metrics = metrics
        hostAllowance = RateLimiter(perMinute: settings.targetPushesPerMinute, burst: settings.targetPushBurst, now: now)
        self.now = now
        self.clock = clock
        self.logger = logger
        (changed, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// A registration came or went: the subscriptions are brought in line once the burst settles,
    /// and until then each event reads the registrations afresh (one just deleted is not
    /// forwarded to).
    func registrationsChanged() {
        known.withLockedValue { $0 = [:] }
        signal.yield()
    }

    /// What one relay is asked for: the wallet service keys, each with the app keys it takes.
    typealias Watch = [String: Set<String>]

    func run() async throws {
        guard let subscriber else { return }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.purgeLoop() }
                // Other instances' changes arrive by reading again now and then.
                group.addTask {
                    while !Task.isCancelled {
                        try? await self.clock.sleep(for: self.lease / 3)
                        self.signal.yield()
                    }
                }
                var running: [String: (watch: Watch, task: Task<Void, Never>)] = [:]
                signal.yield()
                for await _ in changed {
                    // A burst of registrations (an app's launch day) is laid out once, not once each:
                    // every change of a relay's wallets reconnects it.
                    try? await clock.sleep(for: Self.settle)
                    let wanted = await self.desired()
                    for (relay, entry) in running where wanted[relay] != entry.watch {
                        entry.task.cancel()
                        running[relay] = nil
                        // A relay laid out again sets its own count; one no longer watched has none.
                        if wanted[relay] == nil { metrics.nwcSubscriptions(relay: relay, 0) }
                    }
                    for (relay, watch) in wanted where running[relay] == nil {
                        running[relay] = (watch, Task { await self.hold(relay: relay, watch: watch, subscriber: subscriber) })
                    }
                    metrics.nwcRelaysWatched(running.count)
                }
                for entry in running.values { entry.task.cancel() }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.signal.finish()
        }
    }

    /// Every relay with the wallet keys it should be watched for.
    func desired() async -> [String: Watch] {
        let registrations: [NwcRegistration]
        do {
            registrations = try await store.nwcRegistrations()
        } catch {
            logger.warning("nwc registrations could not be read", metadata: ["error": "\(error)"])
            return [:]
        }
        // Only the wallets whose lease this instance holds: one subscription per wallet.
        let moment = now()
        let held: Set<String>
        do {
            held = try await store.leaseNwcWallets(
                Array(Set(registrations.map(\.walletServicePubkey))).sorted(), owner: instance, now: moment,
                until: moment.addingTimeInterval(lease.timeInterval))
        } catch {
            logger.warning("nwc leases could not be taken", metadata: ["error": "\(error)"])
            return [:]
        }
        known.withLockedValue { known in
            known = Dictionary(grouping: registrations) { $0.walletServicePubkey + $0.appPubkey }
        }
        // Each registration's relays in their one spelling, once: for the count and the layout.
        let spelled = registrations.map { Set($0.relays.map { NostrRelayURL.normalized($0) ?? $0 }) }
        // What is registered now: relays of registrations since deleted leave the count.
        watchedRelays.withLockedValue { $0 = spelled.reduce(into: Set<String>()) { $0.formUnion($1) } }
        var wanted: [String: Watch] = [:]
        for (registration, relays) in zip(registrations, spelled) where held.contains(registration.walletServicePubkey) {
            for relay in relays {
                wanted[relay, default: [:]][registration.walletServicePubkey, default: []].insert(registration.appPubkey)
            }
        }
        return wanted
    }

    /// How Herald's subscriptions are laid out on one relay: filters naming many wallet keys
    /// (`#p` lists), few subscriptions per connection. Most relays allow 20 to 32 subscriptions a
    /// connection and refuse the rest (a `CLOSED`, or only a `NOTICE`); one subscription per
    /// wallet left every wallet past the limit unwatched. Learned per relay: each refusal halves
    /// the subscriptions per connection, then the keys per filter.
    struct RelayLayout: Sendable, Equatable {
        var maxSubscriptions = 10
        var keysPerFilter = 256

        init() {}

        /// Within what the relay says of itself (NIP-11), never past the defaults: as many
        /// subscriptions as it holds, and filters whose `REQ` fits its longest message.
        init(_ information: RelayInformation) {
            if let held = information.limitation?.maxSubscriptions, held > 0 { maxSubscriptions = min(maxSubscriptions, held) }
            if let longest = information.limitation?.maxMessageLength, longest > 0 {
                keysPerFilter = max(1, min(keysPerFilter, (longest - Self.requestOverhead) / Self.bytesPerKey))
            }
        }

        /// A `REQ` without its keys (`["REQ","herald-N",{"kinds":[23194],"#p":[],"since":N}]`),
        /// with room to spare, and what each key adds (64 hex digits, quotes and a comma).
        static let requestOverhead = 128
        static let bytesPerKey = 67

        mutating func shrink() {
            if maxSubscriptions > 1 {
                maxSubscriptions /= 2
            } else {
                keysPerFilter = max(1, keysPerFilter / 2)
            }
        }

        /// The wallets' filters (`#p` lists of up to ``keysPerFilter``, each from the earliest
        /// `since` among its wallets), in connections of up to ``maxSubscriptions`` each.
        func connections(_ wallets: [(key: String, since: Int64)]) -> [[(id: String, filter: String)]] {
            let filters = stride(from: 0, to: wallets.count, by: keysPerFilter).map { start in
                let group = wallets[start..<min(start + keysPerFilter, wallets.count)]
                let since = group.map(\.since).min() ?? 0
                return (id: "herald-\(start / keysPerFilter)", filter: NwcFilter.requests(to: group.map(\.key), since: since))
            }
            return stride(from: 0, to: filters.count, by: maxSubscriptions).map { Array(filters[$0..<min($0 + maxSubscriptions, filters.count)]) }
        }
    }

    /// The relays the registrations name, in their one spelling: what ``admitRelays(_:maxTotal:maxPerHost:)``
    /// counts against, kept here so a registration costs no read of every other one.
    private let watchedRelays = NIOLockedValueBox<Set<String>>([])

    /// Takes `relays` into the watched set if that keeps it within `maxTotal` relays and
    /// `maxPerHost` on each host; relays already watched cost nothing. Check and take are one
    /// step, so registrations at once cannot pass the caps together.
    func admitRelays(_ relays: Set<String>, maxTotal: Int, maxPerHost: Int) -> Bool {
        watchedRelays.withLockedValue { watched in
            let fresh = relays.subtracting(watched)
            guard !fresh.isEmpty else { return true }
            let all = watched.union(fresh)
            guard all.count <= maxTotal else { return false }
            for host in Set(fresh.map(NostrRelayURL.host)) where all.filter({ NostrRelayURL.host($0) == host }).count > maxPerHost {
                return false
            }
            watched = all
            return true
        }
    }

    /// Forwards to other servers, per destination host (``post(_:event:to:)``).
    private let hostAllowance: RateLimiter

    /// What each relay has taught about its limits.
    private let layouts = NIOLockedValueBox<[String: RelayLayout]>([:])

    /// What Herald knows of `relay`'s limits: on first contact, what its NIP-11 document says
    /// (the defaults when it serves none); after that, what its refusals taught. A relay that
    /// could not be asked gets the defaults for this connection and is asked again on the next.
    func layout(of relay: String, subscriber: NostrRelaySubscriber) async -> RelayLayout {
        if let known = layouts.withLockedValue({ $0[relay] }) { return known }
        let layout: RelayLayout
        do {
            layout = try await subscriber.information(url: relay).map(RelayLayout.init) ?? RelayLayout()
            logger.debug(
                "nwc relay limits",
                metadata: ["nostr.relay": "\(relay)", "subscriptions": "\(layout.maxSubscriptions)", "keys": "\(layout.keysPerFilter)"])
        } catch {
            logger.debug("nwc relay information not read; default limits", metadata: ["nostr.relay": "\(relay)", "error": "\(error)"])
            return RelayLayout()
        }
        return layouts.withLockedValue { layouts in
            if let learned = layouts[relay] { return learned }
            layouts[relay] = layout
            return layout
        }
    }

    /// Keeps one relay's subscriptions open (over as many connections as its limits need),
    /// reconnecting with a capped, jittered backoff and subscribing from each wallet's cursor.
    func hold(relay: String, watch: Watch, subscriber: NostrRelaySubscriber) async {
        var backoff = Self.firstBackoff
        while !Task.isCancelled {
            let oldest = Int64(now().timeIntervalSince1970 - Self.seenFor)
            let cursors = (try? await store.nwcCursors()) ?? [:]
            let wallets = watch.keys.sorted().map { wallet in (key: wallet, since: max(cursors[wallet] ?? oldest, oldest) - Self.sinceMargin) }
            let layout = await layout(of: relay, subscriber: subscriber)
            let connections = layout.connections(wallets)
            let lastedLong = clock.timer(after: Self.steadyConnection)
            metrics.nwcSubscriptions(relay: relay, connections.reduce(0) { $0 + $1.count })
            do {
                // One connection's end ends them all: they are laid out again together.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for subscriptions in connections {
                        group.addTask {
                            try await subscriber.run(url: relay, subscriptions: subscriptions, logger: self.logger) { _, event in
                                await self.receive(event, watch: watch)
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            } catch is CancellationError {
                return
            } catch let refused as NostrRelaySubscriber.Closed {
                metrics.nwcSubscriptionRefused(relay: relay)
                let smaller = layouts.withLockedValue { layouts in
                    var layout = layouts[relay] ?? RelayLayout()
                    layout.shrink()
                    layouts[relay] = layout
                    return layout
                }
                logger.notice(
                    "nwc relay refused a subscription; subscribing again with fewer per connection",
                    metadata: [
                        "nostr.relay": "\(relay)", "error": "\(refused)", "subscriptions": "\(smaller.maxSubscriptions)",
                        "keys": "\(smaller.keysPerFilter)",
                    ])
            } catch {
                logger.notice("nwc relay connection ended", metadata: ["nostr.relay": "\(relay)", "error": "\(error)"])
            }
            metrics.nwcSubscriptions(relay: relay, 0)
            if lastedLong() { backoff = Self.firstBackoff }
            let jittered = backoff * Double.random(in: 0.5...1.0)
            try? await clock.sleep(for: jittered)
            backoff = min(backoff * 2, Self.maxBackoff)
        }
    }

    /// Why an event is not forwarded, for the metrics.
    enum Refusal: String {
        case unreadable
        case invalidSignature = "invalid_signature"
        case wrongKind = "wrong_kind"
        case notAddressed = "not_addressed"
        case unknownApp = "unknown_app"
        case expired, undeliverable
        case futureEvent = "future_event"
        case webhookRateLimited = "webhook_rate_limited"
    }

    /// How far ahead of this server's clock an event may be dated: relays' and phones' clocks.
    static let maxFutureSkew: TimeInterval = 300

    /// Checks one event and forwards it once.
    func receive(_ raw: String, watch: Watch) async {
        metrics.nwcEvent("seen")
        guard let event = try? WireJSON.decode(NostrEvent.self, from: Data(raw.utf8)) else { return refuse(.unreadable) }
        guard event.isValid else { return refuse(.invalidSignature) }
        guard event.kind == NwcKind.request else { return refuse(.wrongKind) }
        guard let wallet = event.tags(named: "p").compactMap(\.first).first(where: { watch[$0] != nil }) else { return refuse(.notAddressed) }
        guard watch[wallet]?.contains(event.pubkey.lowercased()) == true else { return refuse(.unknownApp) }
        if Double(event.createdAt) > now().timeIntervalSince1970 + Self.maxFutureSkew { return refuse(.futureEvent) }
        if let expiration = event.tags(named: "expiration").first?.first.flatMap(Int64.init),
            Double(expiration) <= now().timeIntervalSince1970
        {
            return refuse(.expired)
        }
        let claimed: Bool
        do {
            claimed = try await store.claimNwcEvent(
                id: event.id.lowercased(), walletServicePubkey: wallet, appPubkey: event.pubkey.lowercased(), createdAt: event.createdAt, now: now())
        } catch {
            logger.warning("nwc event could not be claimed", metadata: ["error": "\(error)"])
            return
        }
        guard claimed else { return metrics.nwcEvent("deduplicated") }
        do {
            try await forward(raw, event: event, wallet: wallet)
            metrics.nwcEvent("forwarded")
        } catch NotForwarded.webhookRateLimited {
            refuse(.webhookRateLimited)
        } catch {
            // Not lost: the next time a relay sends it (a reconnect reads from the cursor back), it is taken again.
            try? await store.releaseNwcEvent(id: event.id.lowercased())
            logger.warning("nwc event not forwarded", metadata: ["error": "\(error)", "nostr.event": "\(event.id.prefix(16))"])
            refuse(.undeliverable)
        }
    }

    private func refuse(_ refusal: Refusal) {
        metrics.nwcRefused(refusal.rawValue)
    }

    /// Why an event found no one to go to.
    enum NotForwarded: Error {
        case unknownRegistration, deviceGone
        /// Another server's webhook took its allowance: the event is dropped, not retried.
        case webhookRateLimited
    }

    /// To each registration of the pair (one per node key that made one): this server's device
    /// webhook is the push, with no HTTP hop; another URL gets breez-lnurl's body.
    func forward(_ raw: String, event: NostrEvent, wallet: String) async throws {
        let key = wallet + event.pubkey.lowercased()
        var found = known.withLockedValue { $0[key] } ?? []
        if found.isEmpty {
            // Registered since the last reading: read again.
            found = try await store.nwcRegistrations().filter { $0.walletServicePubkey + $0.appPubkey == key }
        }
        guard !found.isEmpty else { throw NotForwarded.unknownRegistration }
        var forwarded = 0
        var lastError: (any Error)?
        for registration in found {
            do {
                try await forward(raw, event: event, to: registration)
                forwarded += 1
            } catch {
                lastError = error
            }
        }
        if forwarded == 0, let lastError { throw lastError }
    }

    private func forward(_ raw: String, event: NostrEvent, to registration: NwcRegistration) async throws {
        // Through the directory, as every push: a deleted, dead or unconfirmed device is not woken.
        let found: (device: Device, recipient: PushDelivery.Recipient)?
        do {
            found = try await delivery.directory.device(webhookURL: registration.webhookURL)
        } catch is APIError {
            throw NotForwarded.deviceGone
        }
        guard let found else { return try await post(raw, event: event, to: registration.webhookURL) }
        var recipient = found.recipient
        recipient.idempotencyKey = "nwc:\(event.id.lowercased()):\(found.device.id)"
        let webhook = WebhookRequest(form: .template, name: NotificationType.nwcEvent.rawValue, data: ["event": .string(raw)])
        try webhook.validate()
        _ = try await delivery.submit(webhook, to: recipient, appData: nil)
    }

    /// How long an app waits for a wallet's answer, at most: a request to another server's
    /// webhook that its host's allowance cannot take within this (or before the request's own
    /// NIP-40 expiration) is dropped rather than sent when no one waits for it any more.
    static let webhookRetryWindow: TimeInterval = 60

    /// Another service's webhook: breez-lnurl's body, POSTed through the outbox (retries, dead
    /// letters), once per event and URL. Anyone can make a wallet's relay carry requests, so each
    /// destination host gets the allowance a device token gets (`target_pushes_per_minute`,
    /// `target_push_burst`): past its burst a POST waits for its slot in the host's bucket, and
    /// one whose slot is past the retry window is dropped and counted. 300 strangers' events are
    /// not 300 POSTs at once to someone else's server, and a burst of the wallet's own requests
    /// is paced, not lost.
    func post(_ raw: String, event: NostrEvent, to url: String) async throws {
        let moment = now()
        var window = Self.webhookRetryWindow
        if let expiration = event.tags(named: "expiration").first?.first.flatMap(TimeInterval.init) {
            window = min(window, expiration - moment.timeIntervalSince1970)
        }
        guard let wait = hostAllowance.reserve(URLComponents(string: url)?.host?.lowercased() ?? url, within: window) else {
            metrics.rateLimited()
            throw NotForwarded.webhookRateLimited
        }
        var writer = JSONWriter()
        writer.raw(#"{"template":"#)
        writer.string(NotificationType.nwcEvent.rawValue)
        writer.raw(#","data":{"event":"#)
        writer.string(raw)
        writer.raw("}}")
        let recipient = PushDelivery.Recipient(
            target: PushTarget(destination: .webhook, token: url),
            idempotencyKey: "nwc:\(event.id.lowercased()):\(EnqueueResult.fingerprint(of: Array(url.utf8)).prefix(16))")
        let message = PushMessage(
            kind: .background, data: [WebhookForwardProvider.bodyKey: String(decoding: writer.bytes, as: UTF8.self)],
            expiresAt: moment.addingTimeInterval(wait + settings.jobTTL.timeInterval))
        if wait > 0 { metrics.nwcEvent("paced") }
        // The host's bucket holds at most what the URL's own would (it counts every URL on the
        // host with the same rates), so the push allowance is not charged a second time: a paced
        // POST would find it spent.
        _ = try await delivery.submit(
            message, type: NotificationType.nwcEvent.rawValue, to: [recipient], metric: NotificationType.nwcEvent.rawValue,
            chargesAllowance: false,
            dueAt: wait > 0 ? moment.addingTimeInterval(wait) : nil)
    }

    static let purgeEvery: Duration = .seconds(3600)

    /// Forgets old forwarded events and unused registrations, every ``purgeEvery``.
    func purgeLoop() async {
        while !Task.isCancelled {
            let moment = now()
            if let gone = try? await store.purgeNwc(
                seenBefore: moment.addingTimeInterval(-Self.seenFor), unusedBefore: moment.addingTimeInterval(-Self.unusedFor)),
                gone > 0
            {
                registrationsChanged()
            }
            try? await clock.sleep(for: Self.purgeEvery)
        }
    }
}
