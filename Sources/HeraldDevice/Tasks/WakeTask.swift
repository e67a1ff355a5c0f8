import Foundation
import HeraldWire

/// An LSP's wake push: notes what waits for the app and says so; with
/// `.attemptCompletion` it first lets the wallet try to settle the payment.
struct WakeTask: Sendable {
    let event: WakeEvent

    func run(in context: TaskContext) async -> TaskOutcome {
        let notify = Self.notifyOutcome(for: event, context.catalogue)
        guard context.configuration.wakeHandling == .attemptCompletion, event.kind == .incomingHtlc || event.kind == .cjitPaymentArrived,
            let hash = event.paymentHash
        else {
            return notify
        }
        do {
            let wallet = try await context.wallet()
            try await wallet.sync()
            guard let payment = try await wallet.payment(hash: hash), payment.isSettled else { return notify }
            await context.reportZapIfAny(paymentHash: hash, preimage: payment.preimage)
            return .received(paymentHash: hash, msat: payment.amountMsat, context.catalogue)
        } catch {
            // The user can still finish in the app: the "open now" message is the designed path.
            return notify
        }
    }

    /// The open-the-app content and the pending item; also the fallback for a wake push.
    static func notifyOutcome(for event: WakeEvent, _ catalogue: ContentCatalogue) -> TaskOutcome {
        let sats = event.amountMsat.map { ["sats": String($0 / 1000)] } ?? [:]
        let key: ContentCatalogue.Key
        let kind: PendingItem.Kind
        switch event.kind {
        case .cjitPaymentArrived: (key, kind) = (.cjitPaymentArrived, .incomingPayment)
        case .orderPaymentConfirmed: (key, kind) = (.orderPaymentConfirmed, .channel)
        case .mutualClose: (key, kind) = (.mutualClose, .channel)
        case .liquidityManagementRequest: (key, kind) = (.liquidityManagementRequest, .channel)
        case .expirySoon: (key, kind) = (.expirySoon, .channel)
        default: (key, kind) = (.incomingHtlc, .incomingPayment)
        }
        var effects: [RecordEffect] = []
        if event.kind != .mutualClose {
            let item = PendingItem(
                kind: kind, id: event.paymentHash ?? "\(event.kind.rawValue)", amount: event.amountMsat.map(String.init),
                unit: event.amountMsat == nil ? nil : Receipt.millisatoshis, createdAt: Date()
            )
            effects.append(.pending(item))
        }
        return TaskOutcome(content: catalogue.content(for: key, values: sats), effects: effects)
    }
}
