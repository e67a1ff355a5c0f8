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
/// this process completes the waiter at once; one that reaches another process on the same
/// database is found by polling the store. `run()` polls and sweeps expired reply URLs.
public final class ReplyRelay: Service, Sendable {
    /// A reply URL handed out and its id.
    public struct Handle: Sendable, Hashable {
        public var id: String
        public var url: String
    }

    let store: any ReplyStore
    let settings: ServerSettings
    let now: @Sendable () -> Date
    let logger: Logger
    private let waiters = ReplyWaiters()

    public init(
        store: some ReplyStore,
        settings: ServerSettings,
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger
    ) {
        self.store = store
        self.settings = settings
        self.now = now
        self.logger = logger
    }

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
    /// come too early.
    func open(kind: NotificationType) async throws -> Handle {
        let created = now()
        let id = try await store.createReply(
            kind: kind.rawValue, now: created, expiresAt: created.addingTimeInterval(settings.replyTimeout.timeInterval)
        )
        waiters.open(id)
        return Handle(id: id, url: settings.publicURL + Self.pathPrefix + id)
    }

    /// Waits for the device's answer until the reply timeout; `nil` when none came. The reply
    /// URL is closed either way, so nothing is left pending.
    func answer(for handle: Handle) async -> ReplyAnswer? {
        let waiters = self.waiters
        let timeout = settings.replyTimeout
        let arrived = await withTaskGroup(of: ReplyAnswer?.self) { group in
            group.addTask { await waiters.wait(handle.id) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        waiters.close(handle.id)
        if let arrived { return arrived }
        // Closing the reply is also the last look: an answer may have landed a moment ago.
        do {
            return try await store.expireReply(id: handle.id, now: now())
        } catch {
            logger.warning("could not expire a reply", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Closes a reply whose request failed before its push was sent.
    func abandon(_ handle: Handle) async {
        waiters.close(handle.id)
        _ = try? await store.expireReply(id: handle.id, now: now())
    }

    /// A device's answer (`POST /api/v1/reply/{id}`).
    func deliver(id: String, answer: ReplyAnswer) async throws -> ReplyAnswerOutcome {
        let outcome = try await store.answerReply(id: id, answer: answer, now: now())
        if outcome == .accepted { waiters.resolve(id, with: answer) }
        return outcome
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown { try await self.loop() }
    }

    private func loop() async throws {
        let sweepEvery: Duration = .seconds(60)
        var lastSweep = ContinuousClock.now - sweepEvery
        while !Task.isCancelled {
            await pollOtherProcesses()
            if ContinuousClock.now - lastSweep >= sweepEvery {
                await sweep()
                lastSweep = .now
            }
            try await Task.sleep(for: settings.replyPollInterval)
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
/// the waiter started waiting.
final class ReplyWaiters: Sendable {
    private enum Slot {
        case waiting(CheckedContinuation<ReplyAnswer?, Never>?)
        case answered(ReplyAnswer)
    }

    private let slots = NIOLockedValueBox<[String: Slot]>([:])

    func open(_ id: String) {
        slots.withLockedValue { $0[id] = .waiting(nil) }
    }

    /// Forgets the slot; a waiter still suspended gets `nil`.
    func close(_ id: String) {
        let continuation: CheckedContinuation<ReplyAnswer?, Never>? = slots.withLockedValue { slots in
            guard case .waiting(let continuation)? = slots.removeValue(forKey: id) else { return nil }
            return continuation
        }
        continuation?.resume(returning: nil)
    }

    func resolve(_ id: String, with answer: ReplyAnswer) {
        let continuation: CheckedContinuation<ReplyAnswer?, Never>? = slots.withLockedValue { slots in
            guard case .waiting(let continuation)? = slots[id] else { return nil }
            slots[id] = .answered(answer)
            return continuation
        }
        continuation?.resume(returning: answer)
    }

    var waitingIDs: [String] {
        slots.withLockedValue { slots in
            slots.compactMap { id, slot in
                if case .waiting = slot { return id }
                return nil
            }
        }
    }

    /// The answer, or `nil` when the slot is closed or the waiting task is cancelled.
    func wait(_ id: String) async -> ReplyAnswer? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ReplyAnswer?, Never>) in
                let immediate: ReplyAnswer?? = slots.withLockedValue { slots in
                    switch slots[id] {
                    case .answered(let answer)?: return .some(answer)
                    case .waiting(nil)? where !Task.isCancelled:
                        slots[id] = .waiting(continuation)
                        return .none
                    default: return .some(nil)
                    }
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<ReplyAnswer?, Never>? = slots.withLockedValue { slots in
                guard case .waiting(let continuation?)? = slots[id] else { return nil }
                slots[id] = .waiting(nil)
                return continuation
            }
            continuation?.resume(returning: nil)
        }
    }
}
