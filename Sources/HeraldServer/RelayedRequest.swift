import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// Request/response through a sleeping phone: push with a reply URL, wait for the answer.
extension WebhookRoutes {
    enum Asked: Sendable {
        case answered(ReplyAnswer)
        /// No answer within the reply timeout.
        case timedOut
        /// No answer, and the push service said the device's token is gone.
        case tokenDead
    }

    /// Pushes `webhook` with a fresh `reply_url` added to its data and waits for the device.
    /// With a `sealKey` the push is sealed, `reply_url` included: only the device learns it.
    func ask(_ webhook: WebhookRequest, target: PushTarget, sealKey: SealPublicKey? = nil, appData: String?) async throws
        -> Asked
    {
        var webhook = webhook
        // Before the reply is opened: a refused request leaves nothing to clean up.
        try await targetLimiter.takePushes(for: [target], metrics: metrics)
        let reply: ReplyRelay.Handle
        do {
            reply = try await relay.open(kind: webhook.notificationType)
        } catch is ReplyRelay.Full {
            throw APIError.overloaded
        } catch {
            throw APIError.storeUnavailable("the request could not be stored; retry")
        }
        webhook.data["reply_url"] = .string(reply.url)
        do {
            try webhook.validate()
            _ = try await enqueue(webhook, target: target, sealKey: sealKey, appData: appData, idempotencyKey: nil)
        } catch {
            await relay.abandon(reply)
            throw error
        }
        if let answer = await relay.answer(for: reply) { return .answered(answer) }
        let dead = (try? await devices.resolveWebhookToken(target.token, rawPlatform: target.platform).isDead) ?? false
        return dead ? .tokenDead : .timedOut
    }

    static let tokenUnregistered = APIError(
        .gone, "token_unregistered", "the push service reported this device token as unregistered"
    )

    static func replyTimeout(_ settings: ServerSettings) -> APIError {
        APIError(
            .gatewayTimeout, "reply_timeout",
            "the device did not answer within \(Int(settings.replyTimeout.timeInterval.rounded(.up))) s"
        )
    }
}
