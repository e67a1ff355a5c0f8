import HeraldWire

/// `invoice_request`: answers a BOLT12 invoice request with `{invoice}` or `{error}`.
struct InvoiceRequestTask: Sendable {
    let request: InvoiceRequestPayload

    func run(in context: TaskContext) async -> TaskOutcome {
        let catalogue = context.catalogue
        guard let replyURL = request.replyURL else {
            return TaskOutcome(content: catalogue.content(for: .invoiceRequestFailure), fallbackReason: "no reply_url")
        }
        do {
            let invoice = try await context.wallet().bolt12Invoice(offer: request.offer, invoiceRequest: request.invoiceRequest)
            let report = await context.reply(Bolt12InvoiceReply.invoice(invoice), to: replyURL)
            guard report.delivered else {
                return TaskOutcome(content: catalogue.content(for: .invoiceRequestFailure), fallbackReason: "reply \(report.outcome.rawValue)")
            }
            return TaskOutcome(content: catalogue.content(for: .invoiceRequest))
        } catch {
            let reason = WalletError.payerReason(for: error, otherwise: "Failed to create invoice")
            await context.reply(Bolt12InvoiceReply.error(reason), to: replyURL)
            return TaskOutcome(content: catalogue.content(for: .invoiceRequestFailure), fallbackReason: "wallet: \(error)")
        }
    }
}
