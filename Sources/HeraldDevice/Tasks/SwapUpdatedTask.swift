import Foundation
import HeraldWire

/// `swap_updated`: lets the wallet progress the swap and reports the payment once it is paid,
/// or "Payment Pending" when it is not done within the budget (the Breez plugin's behaviour).
struct SwapUpdatedTask: Sendable {
    let update: SwapUpdate

    func run(in context: TaskContext) async -> TaskOutcome {
        let catalogue = context.catalogue
        let pending = TaskOutcome(
            content: catalogue.content(for: .swapPending),
            fallbackReason: "swap not final",
            effects: [.pending(PendingItem(kind: .swap, id: update.id, createdAt: Date()))]
        )
        do {
            let wallet = try await context.wallet()
            while true {
                try await wallet.sync()
                if let payment = try await wallet.payment(swapIDHash: update.id), let outcome = outcome(for: payment, catalogue) {
                    return outcome
                }
                // Keep a poll interval back so the pending content still goes out in time.
                let interval = context.configuration.swapPollInterval
                guard await context.pause(interval, keeping: interval) else { return pending }
            }
        } catch {
            var outcome = pending
            outcome.fallbackReason = "wallet: \(error)"
            return outcome
        }
    }

    func outcome(for payment: WalletPayment, _ catalogue: ContentCatalogue) -> TaskOutcome? {
        let sats = ["sats": String(payment.amountSat)]
        switch payment.status {
        case .complete, .claimed:
            guard payment.direction == .incoming else {
                return TaskOutcome(content: catalogue.content(for: .paymentSent, values: sats), effects: [.resolved(id: update.id)])
            }
            let receipt = Receipt(id: payment.paymentHash ?? update.id, amount: String(payment.amountMsat), unit: Receipt.millisatoshis, at: Date())
            return TaskOutcome(
                content: catalogue.content(for: .paymentReceived, values: sats), effects: [.resolved(id: update.id), .received(receipt)])
        case .waitingFeeAcceptance:
            return TaskOutcome(
                content: catalogue.content(for: .paymentWaitingFeeAcceptance, values: sats),
                effects: [
                    .pending(
                        PendingItem(kind: .swap, id: update.id, amount: String(payment.amountMsat), unit: Receipt.millisatoshis, createdAt: Date()))
                ]
            )
        case .pending, .failed:
            return nil
        }
    }
}
