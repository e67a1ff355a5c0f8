import Foundation
import HeraldWire

/// `lnurlpay_invoice`: creates an invoice committing to the LNURL metadata and answers
/// `{pr, routes: [], verify}` (LUD-06, LUD-21).
struct LnurlPayInvoiceTask: Sendable {
    let request: LnurlPayInvoiceRequest

    func run(in context: TaskContext) async -> TaskOutcome {
        let catalogue = context.catalogue
        do {
            let wallet = try await context.wallet()
            let limits = try await wallet.receiveLimits()
            guard limits.contains(request.amount) else {
                throw WalletError(.amountOutOfRange, "Invalid amount requested \(request.amount)")
            }
            let commentAllowed = context.configuration.lnurl.commentAllowed
            if let comment = request.comment, comment.count > commentAllowed {
                throw WalletError(.invalidRequest, "Comment is too long")
            }
            // A zap's invoice commits to the zap request as the payer sent it (NIP-57), any other
            // to the metadata the payer saw.
            let description = request.nostr ?? metadataString(in: context)
            let invoice = try await wallet.receive(
                ReceiveRequest(amountMsat: request.amount, description: description, descriptionHash: true, payerNote: request.comment)
            )
            let verify = request.verifyURL.map { LnurlPayInvoice.verifyURL(template: $0, paymentHash: invoice.paymentHash) }
            let report = await context.reply(LnurlPayInvoice(pr: invoice.bolt11, verify: verify), to: request.replyURL)
            let pending = PendingItem(
                kind: .issuedInvoice, id: invoice.paymentHash, amount: String(request.amount), unit: Receipt.millisatoshis,
                createdAt: Date(),
                zapURL: request.nostr == nil ? nil : request.zapURL.map { LnurlPayInvoice.verifyURL(template: $0, paymentHash: invoice.paymentHash) }
            )
            guard report.delivered else {
                return TaskOutcome(content: catalogue.content(for: .lnurlPayFailure), fallbackReason: "reply \(report.outcome.rawValue)")
            }
            return TaskOutcome(
                content: catalogue.content(for: .lnurlPayInvoice, values: ["sats": String(request.amount / 1000)]), effects: [.pending(pending)])
        } catch {
            await context.reply(LnurlError(reason: WalletError.payerReason(for: error, otherwise: "Failed to create invoice")), to: request.replyURL)
            return TaskOutcome(content: catalogue.content(for: .lnurlPayFailure), fallbackReason: "wallet: \(error)")
        }
    }

    /// The metadata the payer saw in the info step, which the description hash must match: as the
    /// service sent it, else rebuilt with the identifier, else the one this device last answered.
    func metadataString(in context: TaskContext) -> String {
        if let metadata = request.metadata, !metadata.isEmpty { return metadata }
        let description = context.configuration.lnurl.description
        if let identifier = request.identifier {
            return LnurlPayMetadata(description: description, identifier: identifier).jsonString
        }
        if let last = context.lastLnurlMetadata { return last }
        return LnurlPayMetadata(description: description).jsonString
    }
}
