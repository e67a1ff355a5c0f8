import Foundation
import HeraldWire

/// `lnurlpay_verify`: tells the payer whether the invoice settled (LUD-21), releasing the
/// preimage only once it did.
struct LnurlPayVerifyTask: Sendable {
    let request: LnurlPayVerifyRequest

    func run(in context: TaskContext) async -> TaskOutcome {
        let catalogue = context.catalogue
        do {
            let wallet = try await context.wallet()
            guard let payment = try await wallet.payment(hash: request.paymentHash), payment.direction == .incoming,
                let invoice = payment.invoice
            else {
                throw WalletError(.notFound, "Not found")
            }
            let answer = LnurlPayVerification(settled: payment.isSettled, preimage: payment.preimage, pr: invoice)
            let maxAge = payment.isSettled ? ReplyCacheLifetime.settledVerification : ReplyCacheLifetime.unsettledVerification
            let report = await context.reply(answer, to: request.replyURL, cacheMaxAge: maxAge)
            var effects: [RecordEffect] = []
            if payment.isSettled { await context.reportZapIfAny(paymentHash: request.paymentHash, preimage: payment.preimage) }
            if payment.isSettled {
                effects.append(
                    .received(Receipt(id: request.paymentHash, amount: String(payment.amountMsat), unit: Receipt.millisatoshis, at: Date()))
                )
            }
            guard report.delivered else {
                return TaskOutcome(
                    content: catalogue.content(for: .lnurlPayVerifyFailure), fallbackReason: "reply \(report.outcome.rawValue)", effects: effects)
            }
            return TaskOutcome(content: catalogue.content(for: .lnurlPayVerify), effects: effects)
        } catch {
            await context.reply(LnurlError(reason: WalletError.payerReason(for: error, otherwise: "Verification failed")), to: request.replyURL)
            return TaskOutcome(content: catalogue.content(for: .lnurlPayVerifyFailure), fallbackReason: "wallet: \(error)")
        }
    }
}
