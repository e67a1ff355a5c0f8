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
    /// Jobs held in memory at most (to send, sending, outcome to write); nil for four times
    /// ``maxConcurrentSends``. The rest wait in the store, which costs disk, not memory.
    public var maxJobsInMemory: Int?
    /// How often the store is read for due jobs nobody signalled: leases of other processes
    /// that ran out. Due retries and jobs intake left in the store wake the dispatcher
    /// themselves, so this is a slow fallback, not the hot path.
    public var safetyPollInterval: Duration = .seconds(5)
    /// How long a claimed job stays leased before another claim may take it
    /// (`lease_seconds`; this is its one default).
    public var lease: Duration = .seconds(60)
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
    /// How long a send's outcome may wait for its commit after the push service answered;
    /// once the oldest has waited this long, no new send starts until commits catch up. Each
    /// outcome waiting is a push a crash would send twice, so this bounds the duplicates
    /// `kill -9` can cause beyond the sends in flight: to what is answered in this time.
    public var maxOutcomeAge: Duration = .milliseconds(100)
    /// How long finished jobs are kept (idempotency keys live as long).
    public var deliveredRetention: Duration = .seconds(7 * 86400)
    public var deadLetterRetention: Duration = .seconds(30 * 86400)
    public var housekeepingInterval: Duration = .seconds(5)
    /// Free every lease at start: right when the store is written by this process alone
    /// (``StoreSharing/singleProcess``); `buildApplication` turns it off for a shared store, whose
    /// leases are left to run out.
    public var releaseLeasesAtStart = true
    /// How long sends under way may still finish after graceful shutdown begins. Past it they
    /// are given up and their jobs given back unattempted (sent again after the restart): a push
    /// service that hangs cannot hold the process's exit.
    public var shutdownGrace: Duration = .seconds(2)
    /// Tokens found dead remembered in memory at most. A full set is emptied: it only spares
    /// sends of jobs already in memory, and the store marks every dead token for good.
    public var deadTokenMemory: Int = 10_000

    public init() {}

    /// ``maxJobsInMemory``, or its default.
    public var jobsInMemoryBound: Int { maxJobsInMemory ?? 4 * maxConcurrentSends }
}

/// Drains the outbox: sends each job through its platform's provider, with bounded
/// concurrency and bounded memory, and records what happened.
///
/// Jobs arrive two ways: straight from intake after their commit, as many as fit in memory
/// (``DispatcherMemory``), and by claims from the store: when room frees while jobs wait there,
/// when the earliest retry falls due (the claim loop sleeps until then or until signalled), and
/// on a slow safety poll for leases other processes let run out. No fixed-interval polling.
public final class OutboxDispatcher: Service, Sendable {
    typealias Store = OutboxStore & TokenStore

    let store: any Store
    let providers: PushRouter
    let metrics: HeraldMetrics
    let configuration: DispatcherConfiguration
    let now: @Sendable () -> Date
    /// Every wait: the claim loop's, retries of a failed write, housekeeping.
    let clock: any Clock<Duration>
    let logger: Logger

    private let incoming = SignalledBuffer<DispatchItem>()
    private let completions = SignalledBuffer<JobCompletion>()
    let memory: DispatcherMemory
    let outcomes: OutcomeGate
    /// Tokens found dead during this run: jobs already in memory for them are not sent.
    private let deadTokens = NIOLockedValueBox(Set<String>())
    private let random = NIOLockedValueBox(SystemRandomNumberGenerator())

    public init(
        store: some OutboxStore & TokenStore,
        providers: PushRouter,
        metrics: HeraldMetrics,
        configuration: DispatcherConfiguration = .init(),
        now: @escaping @Sendable () -> Date = { Date() },
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger
    ) {
        self.store = store
        self.providers = providers
        self.metrics = metrics
        self.configuration = configuration
        self.now = now
        self.clock = clock
        self.logger = logger
        memory = DispatcherMemory(
            bound: configuration.jobsInMemoryBound, maxConcurrentSends: configuration.maxConcurrentSends, metrics: metrics
        )
        outcomes = OutcomeGate(maxAge: configuration.maxOutcomeAge, metrics: metrics)
    }

    /// Room for up to `count` of intake's jobs, to commit leased and hand over with
    /// ``accept(_:)``; intake commits the rest unleased and calls ``deferred()``. Room not used
    /// goes back with ``unreserve(_:)``.
    func reserve(upTo count: Int) -> Int {
        memory.reserveForIntake(upTo: count)
    }

    func unreserve(_ count: Int) {
        memory.forget(count)
    }

    /// Intake left due jobs in the store: claim them as room frees.
    func deferred() {
        memory.noteBacklog()
    }

    /// Hands committed jobs over for sending, with their messages still decoded to spare a JSON
    /// decode per send. Returns false once the dispatcher is shutting down, their room given
    /// back: the caller releases their leases.
    @discardableResult
    func accept(_ items: [DispatchItem]) -> Bool {
        guard incoming.append(contentsOf: items) else {
            memory.forget(items.count)
            return false
        }
        return true
    }

    public func run() async throws {
        if configuration.releaseLeasesAtStart {
            try await store.releaseAllLeases()
        }
        let dispatcher = self
        await withTaskGroup(of: Void.self) { group in
            // On the store's writer thread when it has one, as intake's commits are.
            group.addTask(executorPreference: store.writerExecutor) { await dispatcher.recordCompletions() }
            group.addTask {
                await withTaskGroup(of: SenderExit.self) { senders in
                    // Sends (child tasks of this loop) start where intake's commit handed their
                    // jobs over and end where their outcomes are written, while that thread is idle.
                    senders.addTask(executorPreference: dispatcher.store.senderExecutor) {
                        await dispatcher.sendLoop()
                        return .sendLoop
                    }
                    senders.addTask {
                        await cancelWhenGracefulShutdown { await dispatcher.claimLoop() }
                        // Intake has stopped before us (the server shuts down first):
                        // nothing new arrives, so the send loop may finish.
                        dispatcher.incoming.close()
                        return .other
                    }
                    senders.addTask {
                        try? await cancelWhenGracefulShutdown { try await dispatcher.housekeepingLoop() }
                        return .other
                    }
                    senders.addTask {
                        // Sends still under way this long after shutdown began are given up.
                        guard (try? await gracefulShutdown()) != nil,
                            (try? await dispatcher.clock.sleep(for: dispatcher.configuration.shutdownGrace)) != nil
                        else { return .other }
                        return .graceOver
                    }
                    for await exit in senders {
                        switch exit {
                        case .sendLoop, .graceOver: senders.cancelAll()
                        case .other: continue
                        }
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
                    for (leaseUntil, items) in Dictionary(grouping: batch, by: \.leaseUntil) {
                        do { try await store.release(jobIDs: items.map(\.job.id), leasedUntil: leaseUntil) } catch {
                            logger.error("could not release jobs at shutdown", metadata: ["error": "\(error)"])
                        }
                    }
                    memory.forget(batch.count)
                    return
                }
                for item in batch {
                    if running >= limit {
                        await group.next()
                        running -= 1
                    }
                    await outcomes.waitForRoom()
                    group.addTask { await self.process(item) }
                    running += 1
                }
            }
            await group.waitForAll()
        }
    }

    private var isShuttingDown: Bool {
        // The claim loop closes `incoming` only on graceful shutdown; after that the drain hands
        // over what was buffered, which we release instead of sending.
        incomingClosed.withLockedValue { $0 }
    }

    private let incomingClosed = NIOLockedValueBox(false)

    func process(_ item: DispatchItem) async {
        // A lease that has run out lets a claim take the job again: sent now, it could go out
        // twice. Within the last tenth of the lease (a send's own time) it is given back instead.
        let current = now()
        if current >= item.leaseUntil.addingTimeInterval(-configuration.lease.timeInterval / 10) {
            if current < item.leaseUntil {
                // Still ours: free it for the next claim. Past the lease, someone else may hold it now.
                do { try await store.release(jobIDs: [item.job.id], leasedUntil: item.leaseUntil) } catch {
                    logger.error("could not give back a job near its lease's end", metadata: ["error": "\(error)"])
                }
            }
            logger.notice("job held past its lease is left to a later claim", metadata: ["job-id": "\(item.job.id)"])
            memory.forget(1)
            memory.noteBacklog()
            return
        }
        var localPushes: [Data] = []
        let resolution = await resolve(item.job, message: item.message, localPushes: &localPushes)
        if Task.isCancelled, case .retry = resolution {
            // Given up at shutdown, not refused: back to the store unattempted, sent after the restart.
            // In a task of its own: this one is cancelled, and the write must not be.
            let store = self.store
            let id = item.job.id
            let lease = item.leaseUntil
            do { try await Task { try await store.release(jobIDs: [id], leasedUntil: lease) }.value } catch {
                logger.error("could not give back a job at shutdown", metadata: ["error": "\(error)"])
            }
            memory.forget(1)
            return
        }
        outcomes.answered()
        completions.append(JobCompletion(job: item.job, resolution: resolution, localPushes: localPushes, leaseUntil: item.leaseUntil))
    }

    /// - Parameter localPushes: set to what the local development provider rendered, if it sent.
    private func resolve(
        _ job: OutboxJob, message decoded: PushMessage?, localPushes: inout [Data]
    ) async -> JobResolution {
        let target = PushTarget(destination: job.destination, token: job.token, app: job.app)
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
        // The key is built only when some token has died: it is a string allocation per send.
        if deadTokens.withLockedValue({ !$0.isEmpty && $0.contains(Self.key(target)) }) {
            return deadLetter("token_unregistered", logger: logger)
        }
        guard var message = decoded ?? (try? PushMessage(storedJSON: job.payload)) else {
            return deadLetter("undecodable_payload", logger: logger)
        }
        if message.collapseID == nil && job.destination == .device(.ios) {
            // A push sent again after a crash (at-least-once) replaces the first on the phone
            // instead of showing twice. Not on FCM: it keeps at most four collapse keys per
            // device, so per-job keys would make it drop distinct pushes for an offline phone.
            message.collapseID = "job:" + job.id
        }

        let started = ContinuousClock.now
        // The provider adds the service and the redacted token.
        let outcome = await providers.send(message, to: target, logger: verbose ? logger : baseLogger)
        metrics.sendLatency.record(ContinuousClock.now - started)
        if !outcome.recorded.isEmpty { localPushes = outcome.recorded.map(\.payload) }
        // Every push written counts: a wake's silent push ahead of its alert is one more.
        metrics.sent(
            provider: providers.providerName(for: job.destination, app: job.app), outcome: outcome.kind.rawValue, app: job.app,
            pushes: 1 + (message.prelude?.count ?? 0))

        switch outcome.kind {
        case .delivered:
            if verbose { logger.debug("push delivered") }
            if job.notificationType == WakeService.fallbackType { metrics.wakeFallbackSent() }
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
            return deadLetter("permanent: \(outcome)", metricReason: "permanent", answer: outcome.description, logger: logger)
        case .retry:
            let attempts = job.attempts + 1
            if attempts >= configuration.maxAttempts {
                return deadLetter("max_attempts: \(outcome)", metricReason: "max_attempts", answer: outcome.description, logger: logger)
            }
            let delay = random.withLockedValue { generator in
                configuration.backoff.delay(afterAttempts: attempts, retryAfter: outcome.retryAfter, using: &generator)
            }
            let next = now().addingTimeInterval(delay.timeInterval)
            if next >= job.expiresAt {
                return deadLetter("ttl_expired: \(outcome)", metricReason: "ttl_expired", answer: outcome.description, logger: logger)
            }
            metrics.retries.increment()
            if verbose { logger.debug("push will be retried", metadata: ["outcome": "\(outcome)", "delay": "\(delay)"]) }
            return .retry(at: next, error: outcome.description)
        }
    }

    /// - Parameter answer: The provider's answer to this attempt; nil when none was sent.
    private func deadLetter(
        _ reason: String, metricReason: String? = nil, answer: String? = nil, logger: Logger
    ) -> JobResolution {
        metrics.deadLettered(reason: metricReason ?? reason)
        logger.notice("push dead-lettered", metadata: ["reason": "\(reason)"])
        return .deadLetter(reason: reason, answer: answer)
    }

    static func key(_ target: PushTarget) -> String { "\(target.destination.rawValue):\(target.token)" }

    // MARK: Recording

    private func recordCompletions() async {
        await completions.drain(limit: configuration.completionBatch) { batch in
            // A failed write must not lose the outcome: keep trying; the leases keep the jobs
            // from being claimed again meanwhile.
            var attempt = 0
            while true {
                do {
                    try await store.complete(batch, now: now())
                    // Written: the claim loop learns of the earliest retry (and sleeps until then),
                    // and the jobs leave memory.
                    memory.noteDue(at: batch.lazy.compactMap(\.retryAt).min())
                    outcomes.committed(batch.count)
                    memory.forget(batch.count)
                    if batch.count < configuration.completionBatch && configuration.completionLinger > .zero {
                        try? await clock.sleep(for: configuration.completionLinger)
                    }
                    return
                } catch {
                    attempt += 1
                    logger.error("could not record send outcomes", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                    if attempt >= 20 {
                        // Given up: the jobs stay leased in the store, and are sent again once
                        // their leases run out (the safety poll finds them).
                        outcomes.committed(batch.count)
                        memory.forget(batch.count)
                        return
                    }
                    try? await clock.sleep(for: .milliseconds(100 * attempt))
                }
            }
        }
    }

    // MARK: Claiming and housekeeping

    /// Claims jobs from the store while it holds due ones and memory has room; otherwise sleeps
    /// until the next job falls due, the safety poll, or a signal (room freed, jobs deferred, a
    /// retry recorded).
    private func claimLoop() async {
        var untilSafetyPoll = clock.countdown(configuration.safetyPollInterval)
        while !Task.isCancelled {
            if untilSafetyPoll() == .zero {
                untilSafetyPoll = clock.countdown(configuration.safetyPollInterval)
                do {
                    memory.noteDue(at: try await store.nextDueAt(now: now()))
                } catch is CancellationError {
                    break
                } catch {
                    logger.error("could not read the next due job", metadata: ["error": "\(error)"])
                }
            }
            memory.takeDue(now: now())
            let (room, version) = memory.reserveForClaim()
            if room > 0 {
                var unused = room
                do {
                    let current = now()
                    let leaseUntil = current.addingTimeInterval(configuration.lease.timeInterval)
                    let due = try await store.claimDue(now: current, leaseUntil: leaseUntil, limit: room)
                    unused = 0
                    memory.forget(room - due.count)
                    memory.claimed()
                    if !due.isEmpty {
                        logger.debug("claimed due jobs", metadata: ["count": "\(due.count)"])
                        incoming.append(contentsOf: due.map { DispatchItem(job: $0, message: nil, leaseUntil: leaseUntil) })
                    }
                    if due.count == room { continue }  // more may be due: claim again once room frees
                    memory.drained(since: version)
                    memory.noteDue(at: try await store.nextDueAt(now: now()))
                } catch is CancellationError {
                    memory.forget(unused)
                    break  // Graceful shutdown cancelled the claim: nothing was leased.
                } catch {
                    memory.forget(unused)
                    logger.error("could not claim due jobs", metadata: ["error": "\(error)"])
                    try? await clock.sleep(for: .seconds(1))
                    continue
                }
            }
            var timeout = untilSafetyPoll()
            if let due = memory.nextDue {
                timeout = min(timeout, .seconds(max(0, due.timeIntervalSince(now()))))
            }
            // A floor, so a clock that stands still (a test's) or rounding never spins the loop.
            await memory.wake.wait(upTo: max(timeout, .milliseconds(5)), on: clock)
        }
        memory.close()
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
            try await clock.sleep(for: configuration.housekeepingInterval)
        }
    }
}

/// Which of the dispatcher's loops ended.
private enum SenderExit: Sendable {
    case sendLoop, graceOver, other
}

/// A job on its way to a provider, with its message when intake still has it decoded, and
/// the end of its lease: it is never sent after that.
struct DispatchItem: Sendable {
    var job: OutboxJob
    var message: PushMessage?
    var leaseUntil: Date
}

extension JobCompletion {
    /// When the job is to be tried again, if it is.
    var retryAt: Date? {
        if case .retry(let at, _) = resolution { return at }
        return nil
    }
}
