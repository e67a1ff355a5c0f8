import HeraldWire

/// `lnurlpay_info`: answers the payer's first LNURL-pay request with the wallet's limits (LUD-06/16).
struct LnurlPayInfoTask: Sendable {
    let request: LnurlPayInfoRequest

    func run(in context: TaskContext) async -> TaskOutcome {
        let catalogue = context.catalogue
        do {
            let limits = try await context.wallet().receiveLimits()
            // LUD-06: minSendable is at least 1 and at most maxSendable.
            guard limits.minMsat >= 1, limits.minMsat <= limits.maxMsat else {
                throw WalletError(.unavailable, "Minimum sendable amount is invalid")
            }
            let metadata = LnurlPayMetadata(description: context.configuration.lnurl.description, identifier: request.identifier)
                .jsonString
            let commentAllowed = context.configuration.lnurl.commentAllowed
            let info = LnurlPayInfo(
                callback: request.callbackURL,
                minSendable: limits.minMsat,
                maxSendable: limits.maxMsat,
                metadata: metadata,
                commentAllowed: commentAllowed
            )
            let report = await context.reply(info, to: request.replyURL, cacheMaxAge: ReplyCacheLifetime.payInfo)
            guard report.delivered else {
                return TaskOutcome(content: catalogue.content(for: .lnurlPayFailure), fallbackReason: "reply \(report.outcome.rawValue)")
            }
            return TaskOutcome(content: catalogue.content(for: .lnurlPayInfo), effects: [.lnurlMetadata(metadata)])
        } catch {
            await context.reply(LnurlError(reason: WalletError.payerReason(for: error, otherwise: "Wallet unavailable")), to: request.replyURL)
            return TaskOutcome(content: catalogue.content(for: .lnurlPayFailure), fallbackReason: "wallet: \(error)")
        }
    }
}
