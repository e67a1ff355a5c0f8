import Foundation
import HeraldWire

/// The device plugin: turns one push into an answer to its caller and the content to show,
/// always before the deadline.
///
/// Embed it in an iOS Notification Service Extension (see `HeraldExtension`) or an Android
/// service; every dependency is a parameter.
public struct DevicePlugin: Sendable {
    public let wallet: any WalletService
    public let transport: any ReplyTransport
    public let configuration: DevicePluginConfiguration
    public let catalogue: ContentCatalogue
    public let record: ContainerRecordStore?
    public let coordinator: (any AppExtensionCoordinator)?
    public let customHandlers: [NotificationType: any CustomNotificationHandler]
    let clock: DeviceClock
    let log: DeviceLog

    public init(
        wallet: any WalletService,
        transport: any ReplyTransport,
        configuration: DevicePluginConfiguration = DevicePluginConfiguration(),
        catalogue: ContentCatalogue = .default,
        record: ContainerRecordStore? = nil,
        coordinator: (any AppExtensionCoordinator)? = nil,
        customHandlers: [NotificationType: any CustomNotificationHandler] = [:],
        clock: DeviceClock = .continuous,
        log: DeviceLog = .none
    ) {
        self.wallet = wallet
        self.transport = transport
        self.configuration = configuration
        self.catalogue = catalogue
        self.record = record
        self.coordinator = coordinator
        self.customHandlers = customHandlers
        self.clock = clock
        self.log = log
    }

    /// This plugin with a handler for one more notification type.
    public func registering(_ handler: any CustomNotificationHandler, for type: NotificationType) -> DevicePlugin {
        var handlers = customHandlers
        handlers[type] = handler
        return DevicePlugin(
            wallet: wallet, transport: transport, configuration: configuration, catalogue: catalogue, record: record,
            coordinator: coordinator, customHandlers: handlers, clock: clock, log: log
        )
    }

    /// Handles a push given as JSON (an APNs `userInfo` or an FCM data map).
    public func handle(json: Data) async -> HandlingResult {
        await handle(decode(json: json))
    }

    /// Decodes a push, opening it with the configured seal key when it is sealed.
    public func decode(json: Data) -> IncomingPush {
        IncomingPush(json: json, sealKey: configuration.sealKey?())
    }

    /// Decodes a push from its top-level keys, opening it with the configured seal key when it is sealed.
    public func decode(userInfo: [String: JSONValue]) -> IncomingPush {
        IncomingPush(userInfo: userInfo, sealKey: configuration.sealKey?())
    }

    /// Handles one push. Never throws and returns within `configuration.budget`.
    public func handle(_ push: IncomingPush) async -> HandlingResult {
        let deadline = Deadline(clock: clock, after: configuration.budget)
        let started = clock.elapsed()
        let type = push.notification.typeName
        log(.info, "push received", ["type": type])
        // While the wallet works, a wake's fallback alert waits longer (`received`); the final
        // ack follows it, so the two cannot arrive in the wrong order.
        async let received: Void = acknowledge(push, outcome: .received, by: deadline)
        let previous = await readRecordForStart()

        let session = WalletSession(wallet: wallet)
        let ledger = ReplyLedger()
        let context = TaskContext(
            session: session,
            sender: ReplySender(transport: transport, policy: configuration.reply, clock: clock, log: log),
            ledger: ledger,
            catalogue: catalogue,
            configuration: configuration,
            deadline: deadline,
            log: log,
            lastLnurlMetadata: previous?.lastLnurlMetadata,
            zapURLs: Dictionary(
                (previous?.pending ?? []).compactMap { item in item.zapURL.map { (item.id, $0) } }, uniquingKeysWith: { $1 })
        )
        let fallback = fallbackOutcome(for: push)
        let leaseHolder = LeaseHolder()
        let (step, timedOut) = await DeadlineRace.run(
            until: deadline,
            work: { await self.work(push, in: context, leaseHolder: leaseHolder) },
            afterwards: {
                // After the content is decided: the wallet and the lease are let go even if the
                // deadline already passed, so a slow wallet still ends cleanly.
                await session.disconnectIfConnected()
                leaseHolder.release()
            },
            fallback: { Step(outcome: fallback, disposition: .fellBack, reason: "deadline") }
        )
        let replies = await ledger.reports
        let elapsed = Self.milliseconds(clock.elapsed() - started)
        let result = HandlingResult(
            notificationType: type,
            content: step.outcome.content,
            disposition: step.disposition,
            reason: step.reason,
            timedOut: timedOut,
            replies: replies,
            elapsedMilliseconds: elapsed
        )
        log(
            result.disposition == .handled ? .info : .warning, "push handled",
            ["type": type, "disposition": result.disposition.rawValue, "ms": String(elapsed)])
        await write(result, effects: step.outcome.effects)
        await received
        await acknowledge(push, outcome: result.wakeAckOutcome, by: deadline)
        return result
    }

    /// Tells the NDS what became of a wake (`wake_id`) within what is left of the budget: the
    /// waker sees it in the wake's status. Best effort: a failed ack changes nothing shown.
    func acknowledge(_ push: IncomingPush, outcome: WakeAckOutcome, by deadline: Deadline) async {
        guard case .wake(let event) = push.notification, let id = event.wakeID, let target = configuration.wakeAcks,
            let request = target.request(wakeID: id, outcome: outcome)
        else { return }
        let left = max(.milliseconds(500), deadline.remaining)
        do {
            let status = try await transport.post(request, timeout: left)
            log(status == 204 ? .info : .warning, "wake acknowledged", ["status": String(status), "outcome": outcome.rawValue])
        } catch {
            log(.warning, "wake not acknowledged", ["error": "\(error)"])
        }
    }

    /// The content for a push when nothing else can be done (`serviceExtensionTimeWillExpire`).
    public func fallbackContent(for push: IncomingPush) -> NotificationContent {
        fallbackOutcome(for: push).content
    }

    /// The fallback content from the default catalogue, for when no plugin could be built.
    public static func defaultFallbackContent(for push: IncomingPush, catalogue: ContentCatalogue = .default) -> NotificationContent {
        DevicePlugin(wallet: NoWallet(), transport: NoTransport(), catalogue: catalogue).fallbackContent(for: push)
    }

    struct Step: Sendable {
        var outcome: TaskOutcome
        var disposition: HandlingResult.Disposition
        var reason: String?
    }

    func work(_ push: IncomingPush, in context: TaskContext, leaseHolder: LeaseHolder) async -> Step {
        if Self.needsWallet(push.notification), let coordinator {
            switch await coordinator.extensionWillHandlePush(pingTimeout: configuration.appPingTimeout) {
            case .yieldToApp(let reason):
                log(.info, "yielding to the app", ["reason": reason])
                return Step(outcome: TaskOutcome(content: catalogue.content(for: .handledByApp)), disposition: .yieldedToApp, reason: reason)
            case .proceed(let lease):
                leaseHolder.hold(lease)
            }
        }
        let outcome = await run(push, in: context)
        if let reason = outcome.fallbackReason {
            return Step(outcome: outcome, disposition: .fellBack, reason: reason)
        }
        return Step(outcome: outcome, disposition: .handled, reason: nil)
    }

    func run(_ push: IncomingPush, in context: TaskContext) async -> TaskOutcome {
        switch push.notification {
        case .swapUpdated(let update): return await SwapUpdatedTask(update: update).run(in: context)
        case .invoiceRequest(let request): return await InvoiceRequestTask(request: request).run(in: context)
        case .lnurlPayInfo(let request): return await LnurlPayInfoTask(request: request).run(in: context)
        case .lnurlPayInvoice(let request): return await LnurlPayInvoiceTask(request: request).run(in: context)
        case .lnurlPayVerify(let request): return await LnurlPayVerifyTask(request: request).run(in: context)
        case .paymentReceived(let received): return await WalletSyncTask(event: .payment(received)).run(in: context)
        case .txConfirmed, .addressTxsConfirmed: return await WalletSyncTask(event: .confirmed).run(in: context)
        case .nwcEvent(let event): return await NwcEventTask(event: event).run(in: context)
        case .deviceChallenge(let challenge):
            // The code goes back as a reply would; the user learns only that pushes work.
            let report = await context.reply(DeviceConfirmation(code: challenge.code), to: challenge.confirmURL)
            let content = context.catalogue.content(for: .deviceConfirmed)
            return TaskOutcome(content: content, fallbackReason: report.outcome == .accepted ? nil : "confirmation: \(report.outcome.rawValue)")
        case .wake(let event): return await WakeTask(event: event).run(in: context)
        case .backendEvent(let event): return await BackendEventTask(event: event, alert: push.alert).run(in: context)
        case .custom(let custom):
            guard let handler = customHandlers[custom.type] else {
                var outcome = fallbackOutcome(for: push)
                outcome.fallbackReason = "no handler for \(custom.type.rawValue)"
                return outcome
            }
            do {
                return TaskOutcome(content: try await handler.handle(custom, in: context))
            } catch {
                var outcome = fallbackOutcome(for: push)
                outcome.fallbackReason = "handler: \(error)"
                return outcome
            }
        case .undecodable(_, let reason):
            var outcome = fallbackOutcome(for: push)
            outcome.fallbackReason = reason
            return outcome
        }
    }

    /// The content (and record changes) shown when a push cannot be handled: the type's failure
    /// text, or the sender's own alert for a type the plugin does not know.
    func fallbackOutcome(for push: IncomingPush) -> TaskOutcome {
        switch push.notification {
        case .swapUpdated(let update):
            return TaskOutcome(
                content: catalogue.content(for: .swapPending), effects: [.pending(PendingItem(kind: .swap, id: update.id, createdAt: Date()))])
        case .invoiceRequest: return TaskOutcome(content: catalogue.content(for: .invoiceRequestFailure))
        case .lnurlPayInfo, .lnurlPayInvoice: return TaskOutcome(content: catalogue.content(for: .lnurlPayFailure))
        case .lnurlPayVerify: return TaskOutcome(content: catalogue.content(for: .lnurlPayVerifyFailure))
        case .paymentReceived(let received): return WalletSyncTask.fallback(for: .payment(received), catalogue)
        case .txConfirmed, .addressTxsConfirmed: return WalletSyncTask.fallback(for: .confirmed, catalogue)
        case .nwcEvent: return TaskOutcome(content: catalogue.content(for: .nwcEventFailure))
        case .deviceChallenge: return TaskOutcome(content: catalogue.content(for: .deviceConfirmed))
        case .wake(let event): return WakeTask.notifyOutcome(for: event, catalogue)
        case .backendEvent(let event): return BackendEventTask.outcome(for: event, alert: push.alert, catalogue)
        case .undecodable(let type?, _) where Self.failureKeys[type] != nil:
            return TaskOutcome(content: catalogue.content(for: Self.failureKeys[type] ?? .fallback))
        // A sealed push that did not open names its type in clear: a wake kind or a backend action.
        case .undecodable(let type?, _) where WakeKind(pushType: type.rawValue) != nil:
            let kind = WakeKind(pushType: type.rawValue) ?? .incomingHtlc
            return WakeTask.notifyOutcome(for: WakeEvent(kind: kind, silent: type.rawValue == WakeKind.silentIncomingHtlcType), catalogue)
        case .undecodable(let type?, _) where BackendEventTask.knownActions.contains(BackendAction(rawValue: type.rawValue)):
            return BackendEventTask.outcome(for: BackendEvent(action: BackendAction(rawValue: type.rawValue)), alert: push.alert, catalogue)
        case .custom, .undecodable:
            var content = catalogue.content(for: .fallback)
            if let title = push.alert?.title, !title.isEmpty {
                content.title = title
                content.body = push.alert?.body ?? content.body
            }
            return TaskOutcome(content: content)
        }
    }

    /// The failure text of each Breez type, for a push of that type whose payload is unreadable.
    static let failureKeys: [NotificationType: ContentCatalogue.Key] = [
        .swapUpdated: .swapPending, .invoiceRequest: .invoiceRequestFailure, .lnurlpayInfo: .lnurlPayFailure,
        .lnurlpayInvoice: .lnurlPayFailure, .lnurlpayVerify: .lnurlPayVerifyFailure, .paymentReceived: .paymentIncoming,
        .txConfirmed: .txConfirmed, .addressTxsConfirmed: .txConfirmed, .nwcEvent: .nwcEventFailure,
    ]

    /// Whether handling the push may touch the wallet, and so needs the app's consent.
    static func needsWallet(_ notification: DeviceNotification) -> Bool {
        switch notification {
        case .swapUpdated, .invoiceRequest, .lnurlPayInfo, .lnurlPayInvoice, .lnurlPayVerify, .paymentReceived, .txConfirmed,
            .addressTxsConfirmed, .nwcEvent, .wake, .custom:
            return true
        case .backendEvent, .deviceChallenge, .undecodable: return false
        }
    }

    func readRecordForStart() async -> ContainerRecord? {
        guard let record else { return nil }
        do {
            return try await record.update(within: .milliseconds(500)) { $0.counters.received += 1 }
        } catch {
            log(.warning, "record not updated", ["error": "\(error)"])
            return nil
        }
    }

    func write(_ result: HandlingResult, effects: [RecordEffect]) async {
        guard let record else { return }
        let milliseconds = result.elapsedMilliseconds
        let replied = result.replies.filter { $0.outcome == .accepted }.count
        do {
            try await record.update(within: .milliseconds(500)) { record in
                switch result.disposition {
                case .handled: record.counters.handled += 1
                case .fellBack: record.counters.fellBack += 1
                case .yieldedToApp: record.counters.yieldedToApp += 1
                }
                if result.timedOut { record.counters.timedOut += 1 }
                record.counters.replied += replied
                record.handlingTime.add(milliseconds: milliseconds)
                for effect in effects { record.apply(effect) }
            }
        } catch {
            log(.warning, "record not updated", ["error": "\(error)"])
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

/// Holds the extension's lease until the work is over, whichever task ends it.
final class LeaseHolder: @unchecked Sendable {
    // Guarded by `lock`: set by the work task, released by its continuation.
    private let lock = NSLock()
    private var lease: ExtensionLease?

    func hold(_ lease: ExtensionLease) {
        lock.lock()
        self.lease = lease
        lock.unlock()
    }

    func release() {
        lock.lock()
        let held = lease
        lease = nil
        lock.unlock()
        held?.release()
    }
}

/// Stand-ins for `defaultFallbackContent`, which never reaches a wallet or the network.
private struct NoWallet: WalletService {
    struct Unavailable: Error {}
    func connect() async throws { throw Unavailable() }
    func receiveLimits() async throws -> ReceiveLimits { throw Unavailable() }
    func receive(_ request: ReceiveRequest) async throws -> ReceivedInvoice { throw Unavailable() }
    func bolt12Invoice(offer: String, invoiceRequest: String) async throws -> String { throw Unavailable() }
    func payment(hash: String) async throws -> WalletPayment? { throw Unavailable() }
    func payment(swapIDHash: String) async throws -> WalletPayment? { throw Unavailable() }
    func sync() async throws { throw Unavailable() }
    func disconnect() async {}
}

private struct NoTransport: ReplyTransport {
    func post(_ request: ReplyRequest, timeout: Duration) async throws -> Int { throw InvalidReplyURL(url: request.url) }
}
