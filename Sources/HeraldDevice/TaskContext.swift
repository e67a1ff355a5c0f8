import Foundation
import HeraldWire

/// What a task (built-in or an app's custom handler) works with while handling one push.
public struct TaskContext: Sendable {
    let session: WalletSession
    let sender: ReplySender
    let ledger: ReplyLedger
    /// The texts to show.
    public let catalogue: ContentCatalogue
    public let configuration: DevicePluginConfiguration
    /// The end of the budget for this push.
    public let deadline: Deadline
    let log: DeviceLog
    /// The LNURL metadata this device last sent, from the shared container.
    let lastLnurlMetadata: String?
    /// Where to report the payment of each invoice issued to a zap, by payment hash.
    var zapURLs: [String: String] = [:]

    /// The wallet, connected on first use.
    public func wallet() async throws -> any WalletService {
        try await session.connected()
    }

    /// Reports a settled payment to the server when its invoice was issued to a zap, so the zap
    /// receipt is published (NIP-57); nothing for any other payment.
    func reportZapIfAny(paymentHash: String, preimage: String?) async {
        guard let url = zapURLs[paymentHash], let preimage else { return }
        await reply(ZapPaymentReport(preimage: preimage), to: url)
    }

    /// POSTs a JSON answer to a reply URL with retries inside the deadline, and records it.
    @discardableResult
    public func reply<Body: Encodable>(_ body: Body, to url: String, cacheMaxAge: Int = 0) async -> ReplyReport {
        let report = await sender.send(body, to: url, cacheMaxAge: cacheMaxAge, deadline: deadline)
        await ledger.append(report)
        return report
    }

    /// Waits, unless the wait would run past the deadline less `margin`; `false` means stop now.
    func pause(_ duration: Duration, keeping margin: Duration) async -> Bool {
        guard deadline.remaining > duration + margin else { return false }
        do {
            try await deadline.clock.sleep(duration)
            return true
        } catch {
            return false
        }
    }
}

/// The replies sent while handling one push, readable even if the task is still running.
actor ReplyLedger {
    private(set) var reports: [ReplyReport] = []
    func append(_ report: ReplyReport) { reports.append(report) }
}

/// What a task decided: the content, whether it is the fallback, and what the app should learn.
public struct TaskOutcome: Sendable {
    /// A settled incoming Lightning payment: "Payment Received" with its sats, and its receipt.
    static func received(paymentHash: String, msat: UInt64, _ catalogue: ContentCatalogue) -> TaskOutcome {
        TaskOutcome(
            content: catalogue.content(for: .paymentReceived, values: ["sats": String(msat / 1000)]),
            effects: [.received(Receipt(id: paymentHash, amount: String(msat), unit: Receipt.millisatoshis, at: Date()))])
    }

    public var content: NotificationContent
    /// Why the fallback was shown, or `nil` when the task succeeded.
    public var fallbackReason: String?
    public var effects: [RecordEffect]

    public init(content: NotificationContent, fallbackReason: String? = nil, effects: [RecordEffect] = []) {
        self.content = content
        self.fallbackReason = fallbackReason
        self.effects = effects
    }
}

/// A change to the shared-container record that a push caused.
public enum RecordEffect: Sendable, Hashable {
    /// Money arrived.
    case received(Receipt)
    /// Something waits for the app (an incoming payment held by the LSP, an issued invoice, a deposit).
    case pending(PendingItem)
    /// A pending item of that id is done.
    case resolved(id: String)
    /// The LNURL metadata this device answered with, reused for the invoice's description hash.
    case lnurlMetadata(String)
}
