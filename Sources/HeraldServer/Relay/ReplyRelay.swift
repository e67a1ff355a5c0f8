import Foundation
import HeraldStore
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// The reply relay: a caller's request waits, held open, for the answer a woken device POSTs
/// to its reply URL.
///
/// Each reply id has one waiter in the process that holds the request. An answer that reaches
/// this process completes the waiter as soon as it is committed, with no store round trip. With
/// other processes on the same database, one that reaches another process is announced through
/// the store (``StoreNotifications``: PostgreSQL's `LISTEN/NOTIFY`) and otherwise found by a slow
/// poll (``ServerSettings/replyPollInterval``, 1 s), which also covers notifications missed while
/// the channel was down; alone on its database the relay neither listens nor polls. `run()`
/// listens, polls and sweeps expired reply URLs.
public final class ReplyRelay: Service, Sendable {
    /// A reply URL handed out and its id.
    public struct Handle: Sendable, Hashable {
        public var id: String
        public var url: String
    }

    let store: any ReplyStore
    /// The other processes on the database; nil when this one is alone (SQLite).
    let otherProcesses: (any StoreNotifications)?
    let settings: ServerSettings
    let now: @Sendable () -> Date
    /// Every wait: the answer timeout, the poll and the sweep.
    let clock: any Clock<Duration>
    let logger: Logger
    private let waiters: ReplyWaiters

    public init(
        store: some ReplyStore,
        otherProcesses: (any StoreNotifications)?,
        settings: ServerSettings,
        now: @escaping @Sendable () -> Date = { Date() },
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger
    ) {
        self.store = store
        self.otherProcesses = otherProcesses
        self.settings = settings
        self.now = now
        self.clock = clock
        self.logger = logger
        waiters = ReplyWaiters(capacity: settings.maxHeldReplies)
        rawTokenHolds = RawTokenHolds(settings: settings)
    }

    /// The share of held requests raw push tokens may take.
    let rawTokenHolds: RawTokenHolds

    /// Requests held open for a reply right now (the dashboard shows it).
    public var heldCount: Int { waiters.count }

    /// ``ServerSettings/maxHeldReplies`` requests are held already.
    struct Full: Error {}

    /// The path a reply URL points at, under the API group.
    static let pathPrefix = "/api/v1/reply/"

    /// Whether a webhook needs a relayed answer: a request/response event whose caller gave no
    /// `reply_url` of its own (an external LNURL server gives one, and is answered at once).
    static func holdsAnswer(for webhook: WebhookRequest) -> Bool {
        switch webhook.notificationType {
        case .invoiceRequest, .lnurlpayInfo, .lnurlpayInvoice, .lnurlpayVerify:
            return webhook.data["reply_url"] == nil
        default:
            return false
        }
    }

    /// Opens a pending reply; its waiter exists before the push is sent, so an answer can never
    /// come too early. Throws ``Full`` when the cap on held requests is reached, before anything
    /// is stored.
    func open(kind: NotificationType) async throws -> Handle {
        guard waiters.reserve() else { throw Full() }
        let created = now()
        let id: String
        do {
            id = try await store.createReply(
                kind: kind.rawValue, now: created, expiresAt: created.addingTimeInterval(settings.replyTimeout.timeInterval)
            )
        } catch {
            waiters.cancelReservation()
            throw error
        }
        waiters.open(id)
        return Handle(id: id, url: settings.publicURL + Self.pathPrefix + id)
    }

    /// What waiting for a device's answer came to.
    enum Awaited: Sendable {
        case answered(ReplyAnswer)
        /// None within the reply timeout.
        case timedOut
        /// The server began shutting down: the caller is answered at once rather than held
        /// through it (its push was sent; it may ask again).
        case shuttingDown
    }

    /// Waits for the device's answer until the reply timeout or the server's shutdown. The
    /// reply URL is closed either way, so nothing is left pending.
    func answer(for handle: Handle) async -> Awaited {
        let waiters = self.waiters
        let timeout = settings.replyTimeout
        let clock = self.clock
        let shutDown = NIOLockedValueBox(false)
        let arrived = await withGracefulShutdownHandler {
            await withTaskGroup(of: ReplyAnswer?.self) { group in
                group.addTask { await waiters.wait(handle.id) }
                group.addTask {
                    try? await clock.sleep(for: timeout)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        } onGracefulShutdown: {
            shutDown.withLockedValue { $0 = true }
            waiters.close(handle.id)
        }
        waiters.close(handle.id)
        if let arrived { return .answered(arrived) }
        let stopping = shutDown.withLockedValue { $0 }
        // Closing the reply is also the last look: an answer may have landed a moment ago.
        do {
            if let late = try await store.expireReply(id: handle.id, now: now()) { return .answered(late) }
        } catch {
            logger.warning("could not expire a reply", metadata: ["error": "\(error)"])
        }
        return stopping ? .shuttingDown : .timedOut
    }

    /// Closes a reply whose request failed before its push was sent.
    func abandon(_ handle: Handle) async {
        waiters.close(handle.id)
        _ = try? await store.expireReply(id: handle.id, now: now())
    }

    /// A device's answer (`POST /api/v1/reply/{id}`): once committed, handed straight to the
    /// request this process holds for it, if any.
    func deliver(id: String, answer: ReplyAnswer) async throws -> ReplyAnswerOutcome {
        let outcome = try await store.answerReply(id: id, answer: answer, now: now())
        if outcome == .accepted { waiters.resolve(id, with: answer) }
        return outcome
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let notifications = self.otherProcesses {
                    group.addTask { await self.listen(to: notifications) }
                }
                group.addTask { try? await self.loop() }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Completes held requests as other processes announce their answers.
    private func listen(to notifications: any StoreNotifications) async {
        let waiters = self.waiters
        let store = self.store
        let logger = self.logger
        await notifications.listenUntilCancelled(channel: StoreChannel.answeredReplies, clock: clock, logger: logger) { id in
            guard waiters.isWaiting(id) else { return }
            do {
                if let answer = try await store.answeredReplies(ids: [id])[id] {
                    waiters.resolve(id, with: answer)
                }
            } catch {
                logger.warning("could not read an announced reply", metadata: ["error": "\(error)"])
            }
        }
    }

    private func loop() async throws {
        let sweepEvery: Duration = .seconds(60)
        // Alone on the database, every answer arrives here: nothing to poll for, only sweeping.
        let tick = otherProcesses == nil ? sweepEvery : settings.replyPollInterval
        var sweepDue: @Sendable () -> Bool = { true }
        while !Task.isCancelled {
            if otherProcesses != nil { await pollOtherProcesses() }
            if sweepDue() {
                await sweep()
                sweepDue = clock.timer(after: sweepEvery)
            }
            try await clock.sleep(for: tick)
        }
    }

    /// Completes waiters whose answer reached another process.
    func pollOtherProcesses() async {
        let ids = waiters.waitingIDs
        guard !ids.isEmpty else { return }
        do {
            for (id, answer) in try await store.answeredReplies(ids: ids) {
                waiters.resolve(id, with: answer)
            }
        } catch {
            logger.warning("could not poll replies", metadata: ["error": "\(error)"])
        }
    }

    /// Forgets reply URLs past their tombstone time and stale cached answers.
    func sweep() async {
        let current = now()
        do {
            let replies = try await store.purgeReplies(
                expiredBefore: current.addingTimeInterval(-settings.replyTombstone.timeInterval)
            )
            let cached = try await store.purgeCachedReplies(now: current)
            if replies + cached > 0 {
                logger.debug("swept replies", metadata: ["replies": "\(replies)", "cached": "\(cached)"])
            }
        } catch {
            logger.warning("could not sweep replies", metadata: ["error": "\(error)"])
        }
    }
}

/// One slot per held request: the continuation of its waiter, or the answer that came before
/// the waiter started waiting. At most `capacity` slots, counting those reserved for replies
/// being opened.
final class ReplyWaiters: Sendable {
    private enum Slot {
        case waiting(CheckedContinuation<ReplyAnswer?, Never>?)
        case answered(ReplyAnswer)
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// Slots promised to ``open(_:)`` calls to come.
        var reserved = 0
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// Promises a slot to the next ``open(_:)``; false when every slot is taken.
    func reserve() -> Bool {
        state.withLockedValue { state in
            guard state.slots.count + state.reserved < capacity else { return false }
            state.reserved += 1
            return true
        }
    }

    /// Gives back a slot reserved for a reply that could not be opened.
    func cancelReservation() {
        state.withLockedValue { $0.reserved -= 1 }
    }

    /// Fills a slot reserved with ``reserve()``.
    func open(_ id: String) {
        state.withLockedValue { state in
            state.reserved -= 1
            state.slots[id] = .waiting(nil)
        }
    }

    var count: Int { state.withLockedValue { $0.slots.count } }

    /// Forgets the slot; a waiter still suspended gets `nil`.
    func close(_ id: String) {
        let continuation: CheckedContinuation<ReplyAnswer?, Never>? = state.withLockedValue { state in
            guard case .waiting(let continuation)? = state.slots.removeValue(forKey: id) else { return nil }
            return continuation
        }
        continuation?.resume(returning: nil)
    }

    func resolve(_ id: String, with answer: ReplyAnswer) {
        let continuation: CheckedContinuation<ReplyAnswer?, Never>? = state.withLockedValue { state in
            guard case .waiting(let continuation)? = state.slots[id] else { return nil }
            state.slots[id] = .answered(answer)
            return continuation
        }
        continuation?.resume(returning: answer)
    }

    func isWaiting(_ id: String) -> Bool {
        state.withLockedValue { state in
            if case .waiting? = state.slots[id] { return true }
            return false
        }
    }

    var waitingIDs: [String] {
        state.withLockedValue { state in
            state.slots.compactMap { id, slot in
                if case .waiting = slot { return id }
                return nil
            }
        }
    }

    /// The answer, or `nil` when the slot is closed or the waiting task is cancelled.
    func wait(_ id: String) async -> ReplyAnswer? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReplyAnswer?, Never>) in
                let immediate: ReplyAnswer?? = state.withLockedValue { state in
                    switch state.slots[id] {
                    case .answered(let answer)?: return .some(answer)
                    case .waiting(nil)? where !Task.isCancelled:
                        state.slots[id] = .waiting(continuation)
                        return .none
                    default: return .some(nil)
                    }
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<ReplyAnswer?, Never>? = state.withLockedValue { state in
                guard case .waiting(let continuation?)? = state.slots[id] else { return nil }
                state.slots[id] = .waiting(nil)
                return continuation
            }
            continuation?.resume(returning: nil)
        }
    }
}

/// The held-request slots a raw push token may take. Anyone can name a fresh raw token, so
/// requests to raw tokens get half of ``ServerSettings/maxHeldReplies`` together and a few per
/// client address; requests to registered devices (aliases, Lightning-address payers) are never
/// counted here and always keep the other half.
final class RawTokenHolds: Sendable {
    private struct State {
        var total = 0
        var byClient: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    let capacity: Int
    let perClient: Int

    init(settings: ServerSettings) {
        capacity = max(1, settings.maxHeldReplies / 2)
        perClient = max(1, min(capacity, settings.maxHeldRepliesPerClient))
    }

    enum Refusal: Error {
        /// This client holds its share already.
        case client
        /// Raw tokens hold their share already.
        case full
    }

    /// Takes a slot for `client`, or says why not. Give it back with ``release(_:)``.
    func take(_ client: String) throws(Refusal) {
        let refusal: Refusal? = state.withLockedValue { state in
            if state.total >= capacity { return .full }
            if state.byClient[client, default: 0] >= perClient { return .client }
            state.total += 1
            state.byClient[client, default: 0] += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    func release(_ client: String) {
        state.withLockedValue { state in
            state.total -= 1
            let left = state.byClient[client, default: 1] - 1
            state.byClient[client] = left > 0 ? left : nil
        }
    }
}
