import Foundation
import HeraldWire

/// `payment_received`, `tx_confirmed` and `address_txs_confirmed` (breez/notify's templates):
/// the wallet catches up with its service, and the user sees what arrived.
struct WalletSyncTask: Sendable {
    enum Event: Sendable {
        case payment(PaymentReceived)
        case confirmed
    }

    let event: Event

    func run(in context: TaskContext) async -> TaskOutcome {
        do {
            let wallet = try await context.wallet()
            try await wallet.sync()
            guard case .payment(let received) = event else {
                return TaskOutcome(content: context.catalogue.content(for: .txConfirmed))
            }
            if let payment = try await wallet.payment(hash: received.paymentHash), payment.direction == .incoming, payment.isSettled {
                return .received(paymentHash: received.paymentHash, msat: payment.amountMsat, context.catalogue)
            }
            var outcome = Self.fallback(for: event, context.catalogue)
            outcome.fallbackReason = "the wallet does not show payment \(received.paymentHash) settled"
            return outcome
        } catch {
            var outcome = Self.fallback(for: event, context.catalogue)
            outcome.fallbackReason = "wallet: \(error)"
            return outcome
        }
    }

    /// What the user sees when the wallet could not be asked: the amount the sender named (a
    /// Spark payment webhook names it; the payment is already the wallet's), else a prompt.
    static func fallback(for event: Event, _ catalogue: ContentCatalogue) -> TaskOutcome {
        switch event {
        case .payment(let received):
            if let sat = received.amountSat, sat <= UInt64.max / 1000 {
                return .received(paymentHash: received.paymentHash, msat: sat * 1000, catalogue)
            }
            return TaskOutcome(content: catalogue.content(for: .paymentIncoming))
        case .confirmed:
            return TaskOutcome(content: catalogue.content(for: .txConfirmed))
        }
    }
}

/// `nwc_event`: hands the raw NIP-47 request to the wallet's NWC service, which answers over
/// its relay.
struct NwcEventTask: Sendable {
    let event: NwcEvent

    func run(in context: TaskContext) async -> TaskOutcome {
        do {
            let wallet = try await context.wallet()
            guard try await wallet.handleNwcEvent(event.event) else {
                return TaskOutcome(content: context.catalogue.content(for: .nwcEventFailure), fallbackReason: "the wallet has no NWC service")
            }
            return TaskOutcome(content: context.catalogue.content(for: .nwcEvent))
        } catch {
            return TaskOutcome(content: context.catalogue.content(for: .nwcEventFailure), fallbackReason: "wallet: \(error)")
        }
    }
}
