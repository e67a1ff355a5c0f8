import Foundation
import HeraldPush
import HeraldStore
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// How the dispatcher paces itself.
public struct DispatcherConfiguration: Sendable {
    /// Sends in flight at once, across providers. HTTP/2 multiplexes them over few connections.
    public var maxConcurrentSends: Int = 256
    /// How often due retries and recovered jobs are looked for.
    public var pollInterval: Duration = .milliseconds(500)
    /// How long a claimed job stays leased before another claim may take it.
    public var lease: Duration = .seconds(300)
    /// Attempts before a job is dead-lettered even within its TTL.
    public var maxAttempts: Int = 25
    public var backoff = Backoff()
    /// Completions written per transaction at most.
    public var completionBatch: Int = 1024
    /// How long outcomes gather before they are written. None by default: outcomes still
    /// group (those that finish while one batch is written go in the next), and every moment an
    /// outcome waits in memory is a moment in which `kill -9` makes its push go out twice
    /// (`hostile.py crash`, ten kills at about 1,000/s: 0.64% of pushes sent twice with a 20 ms
    /// linger, 0.13–0.25% without).
    public var completionLinger: Duration = .zero
    /// How long finished jobs are kept (idempotency keys live as long).
    public var deliveredRetention: Duration = .seconds(7 * 86400)
    public var deadLetterRetention: Duration = .seconds(30 * 86400)
    public var housekeepingInterval: Duration = .seconds(5)
    /// Free every lease at start: right for the single-process SQLite store.
    public var releaseLeasesAtStart = true
    /// Tokens found dead remembered in memory at most. A full set is emptied: it only spares
    /// sends of jobs already in memory, and the store marks every dead token for good.
    public var deadTokenMemory: Int = 10_000

    public init() {}
}

/// Drains the outbox: sends each job through its platform's provider, with bounded
/// concurrency, and records what happened.
///
/// Jobs arrive two ways: straight from intake after their commit (no polling delay), and from
/// a poll of the store for due retries and jobs left by a previous run.
public final class OutboxDispatcher: Service, Sendable {
    typealias Store = OutboxStore & TokenStore

    let store: any Store
    let providers: PushRouter
    let metrics: HeraldMetrics
    let configuration: DispatcherConfiguration
    let now: @Sendable () -> Date
    let logger: Logger

    private let incoming = SignalledBuffer<DispatchItem>()
    private let completions = SignalledBuffer<JobCompletion>()
    /// Tokens found dead during this run: jobs already in memory for them are not sent.
    private let deadTokens = NIOLockedValueBox(Set<String>())
    private let random = NIOLockedValueBox(SystemRandomNumberGenerator())

    public init(
        store: some OutboxStore & TokenStore,
        providers: PushRouter,
        metrics: HeraldMetrics,
        configuration: DispatcherConfiguration = .init(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger
    ) {
        self.store = store
        self.providers = providers
        self.metrics = metrics
        self.configuration = configuration
        self.now = now
        self.logger = logger
    }

    /// Hands committed jobs over for sending, with their messages still decoded to spare a JSON
    /// decode per send. Returns false once the dispatcher is shutting down; the jobs stay in the
    /// store and the next run sends them.
    @discardableResult
    func accept(_ items: [DispatchItem]) -> Bool {
        incoming.append(contentsOf: items)
    }

    public func run() async throws {
        if configuration.releaseLeasesAtStart {
            try await store.releaseAllLeases()
        }
        let dispatcher = self
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await dispatcher.recordCompletions() }
            group.addTask {
                await withTaskGroup(of: Void.self) { senders in
                    senders.addTask { await dispatcher.sendLoop() }
                    senders.addTask {
                        await cancelWhenGracefulShutdown { await dispatcher.pollLoop() }
                        // Intake has stopped before us (the server shuts down first):
                        // nothing new arrives, so the send loop may finish.
                        dispatcher.incoming.close()
                    }
                    senders.addTask {
                        try? await cancelWhenGracefulShutdown { try await dispatcher.housekeepingLoop() }
                    }
                }
                dispatcher.completions.close()
            }
        }
        logger.info("outbox dispatcher stopped")
    }

    // MARK: Sending

    private func sendLoop() async {
        let limit = configuration.maxConcurrentSends
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            await incoming.drain(limit: limit) { batch in
                if isShuttingDown {
                    // Not started yet: give them back rather than delay shutdown.
                    let ids = batch.map(\.job.id)
                    do { try await store.release(jobIDs: ids) } catch {
                        logger.error("could not release jobs at shutdown", metadata: ["error": "\(error)"])
                    }
                    return
                }
                for item in batch {
                    if running >= limit {
                        await group.next()
                        running -= 1
                    }
                    group.addTask { await self.process(item) }
                    running += 1
                }
            }
            await group.waitForAll()
        }
    }

    private var isShuttingDown: Bool {
        // The poll loop closes `incoming` only on graceful shutdown; after that the drain hands
        // over what was buffered, which we release instead of sending.
        incomingClosed.withLockedValue { $0 }
    }

    private let incomingClosed = NIOLockedValueBox(false)

    func process(_ item: DispatchItem) async {
        let resolution = await resolve(item.job, message: item.message)
        completions.append(JobCompletion(job: item.job, resolution: resolution))
    }

    private func resolve(_ job: OutboxJob, message decoded: PushMessage?) async -> JobResolution {
        let target = PushTarget(platform: job.platform, token: job.token)
        // Built only where something is logged: each metadata change makes the standard handler
        // re-render all of its metadata, a measurable cost when done for every send.
        let baseLogger = self.logger
        var logger: Logger {
            var scoped = baseLogger
            scoped[metadataKey: "job-id"] = .string(job.id)
            return scoped
        }
        let verbose = baseLogger.logLevel <= .debug

        if now() >= job.expiresAt {
            return deadLetter("ttl_expired", logger: logger)
        }
        if deadTokens.withLockedValue({ $0.contains(Self.key(target)) }) {
            return deadLetter("token_unregistered", logger: logger)
        }
        guard var message = decoded ?? (try? WireJSON.decode(PushMessage.self, from: job.payload)) else {
            return deadLetter("undecodable_payload", logger: logger)
        }
        if message.collapseID == nil && job.platform == .ios {
            // A push sent again after a crash (at-least-once) replaces the first on the phone
            // instead of showing twice. Not on FCM: it keeps at most four collapse keys per
            // device, so per-job keys would make it drop distinct pushes for an offline phone.
            message.collapseID = "job:" + job.id
        }

        let started = ContinuousClock.now
        // The provider adds the service and the redacted token.
        let outcome = await providers.send(message, to: target, logger: verbose ? logger : baseLogger)
        metrics.sendLatency.record(ContinuousClock.now - started)
        metrics.sent(provider: providers.providerName(for: job.platform), outcome: outcome.kind.rawValue)

        switch outcome.kind {
        case .delivered:
            if verbose { logger.debug("push delivered") }
            return .delivered
        case .tokenDead:
            deadTokens.withLockedValue { tokens in
                if tokens.count >= configuration.deadTokenMemory { tokens.removeAll() }
                tokens.insert(Self.key(target))
            }
            metrics.deadLettered(reason: "token_dead")
            logger.info("push token is dead", metadata: ["reason": "\(outcome.reason ?? "-")"])
            return .tokenDead(reason: "token_unregistered: \(outcome.reason ?? "unregistered")")
        case .permanent:
            return deadLetter("permanent: \(outcome)", metricReason: "permanent", logger: logger)
        case .retry:
            let attempts = job.attempts + 1
            if attempts >= configuration.maxAttempts {
                return deadLetter("max_attempts: \(outcome)", metricReason: "max_attempts", logger: logger)
            }
            let delay = random.withLockedValue { generator in
                configuration.backoff.delay(afterAttempts: attempts, retryAfter: outcome.retryAfter, using: &generator)
            }
            let next = now().addingTimeInterval(delay.timeInterval)
            if next >= job.expiresAt {
                return deadLetter("ttl_expired: \(outcome)", metricReason: "ttl_expired", logger: logger)
            }
            metrics.retries.increment()
            if verbose { logger.debug("push will be retried", metadata: ["outcome": "\(outcome)", "delay": "\(delay)"]) }
            return .retry(at: next, error: outcome.description)
        }
    }

    private func deadLetter(_ reason: String, metricReason: String? = nil, logger: Logger) -> JobResolution {
        metrics.deadLettered(reason: metricReason ?? reason)
        logger.notice("push dead-lettered", metadata: ["reason": "\(reason)"])
        return .deadLetter(reason: reason)
    }

    static func key(_ target: PushTarget) -> String { "\(target.platform.rawValue):\(target.token)" }

    // MARK: Recording

    private func recordCompletions() async {
        await completions.drain(limit: configuration.completionBatch) { batch in
            // A failed write must not lose the outcome: keep trying; the leases keep the jobs
            // from being claimed again meanwhile.
            var attempt = 0
            while true {
                do {
                    try await store.complete(batch, now: now())
                    if batch.count < configuration.completionBatch && configuration.completionLinger > .zero {
                        try? await Task.sleep(for: configuration.completionLinger)
                    }
                    return
                } catch {
                    attempt += 1
                    logger.error("could not record send outcomes", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                    if attempt >= 20 { return }
                    try? await Task.sleep(for: .milliseconds(100 * attempt))
                }
            }
        }
    }

    // MARK: Polling and housekeeping

    private func pollLoop() async {
        while !Task.isCancelled {
            // Only claim when the in-memory queue is short, so claimed jobs are sent well
            // within their lease.
            if incoming.count < configuration.maxConcurrentSends {
                do {
                    let due = try await store.claimDue(
                        now: now(),
                        leaseUntil: now().addingTimeInterval(configuration.lease.timeInterval),
                        limit: configuration.maxConcurrentSends
                    )
                    if !due.isEmpty {
                        logger.debug("claimed due jobs", metadata: ["count": "\(due.count)"])
                        incoming.append(contentsOf: due.map { DispatchItem(job: $0, message: nil) })
                        if due.count == configuration.maxConcurrentSends { continue }
                    }
                } catch is CancellationError {
                    break  // Graceful shutdown cancelled the claim: nothing was leased.
                } catch {
                    logger.error("could not claim due jobs", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: configuration.pollInterval)
        }
        incomingClosed.withLockedValue { $0 = true }
    }

    private func housekeepingLoop() async throws {
        while !Task.isCancelled {
            do {
                metrics.queueDepth.set(Int64(try await store.pendingCount()))
                let purged = try await store.purgeFinished(
                    deliveredBefore: now().addingTimeInterval(-configuration.deliveredRetention.timeInterval),
                    deadBefore: now().addingTimeInterval(-configuration.deadLetterRetention.timeInterval)
                )
                if purged > 0 { logger.debug("purged finished jobs", metadata: ["count": "\(purged)"]) }
            } catch is CancellationError {
                return
            } catch {
                logger.error("outbox housekeeping failed", metadata: ["error": "\(error)"])
            }
            try await Task.sleep(for: configuration.housekeepingInterval)
        }
    }
}

/// A job on its way to a provider, with its message when intake still has it decoded.
struct DispatchItem: Sendable {
    var job: OutboxJob
    var message: PushMessage?
}
