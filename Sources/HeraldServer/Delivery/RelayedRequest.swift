import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// A Breez-style webhook event as a push, and request/response through a sleeping phone: push
/// with a reply URL, wait for the answer. The webhook, the Lightning address's LNURL-pay
/// routes and anything else that relays a request come through here.
extension PushDelivery {
    /// Commits the push for `webhook` to one recipient.
    func submit(_ webhook: WebhookRequest, to recipient: Recipient, appData: String?) async throws -> EnqueueResult {
        try await submit(webhook, to: recipient, appData: appData, chargesAllowance: true)
    }

    private func submit(
        _ webhook: WebhookRequest, to recipient: Recipient, appData: String?, chargesAllowance: Bool
    ) async throws -> EnqueueResult {
        let pushData = try webhook.pushData(appData: appData)
        let type = pushData.notificationType.rawValue
        let message = PushMessage.wake(
            pushData, collapseID: Self.collapseID(for: webhook), expiresAt: now().addingTimeInterval(settings.jobTTL.timeInterval))
        return try await submit(message, type: type, to: [recipient], metric: type, chargesAllowance: chargesAllowance)[0]
    }

    /// Swap updates for one swap replace each other on a device that was offline: only the
    /// latest status matters. Request/response events must each arrive, so they never collapse.
    static func collapseID(for webhook: WebhookRequest) -> String? {
        guard webhook.notificationType == .swapUpdated, let id = webhook.data["id"]?.stringValue else { return nil }
        let collapse = "swap:" + id
        return collapse.utf8.count <= 64 ? collapse : nil
    }

    enum Asked: Sendable {
        case answered(ReplyAnswer)
        /// No answer within the reply timeout.
        case timedOut
        /// The server began shutting down while the request waited.
        case shuttingDown
        /// No answer, and the push service said the device's token is gone.
        case tokenDead
    }

    /// Pushes `webhook` with a fresh `reply_url` added to its data and waits for the device.
    /// Sealed to the recipient's key, `reply_url` included: only the device learns it. A retry
    /// asks the device again, so no idempotency key.
    ///
    /// - Parameter rawTokenClient: The client address, when the recipient is a raw push token
    ///   anyone could name: such requests hold only their share of the slots (``RawTokenHolds``).
    func ask(_ webhook: WebhookRequest, to recipient: Recipient, appData: String?, rawTokenClient: String? = nil) async throws -> Asked {
        // A target no provider can reach would only hold a slot until the timeout.
        // Requests are relayed to devices only.
        if let platform = recipient.target.destination.device, providers.provider(for: platform, app: recipient.target.app) == nil {
            throw APIError.platformNotConfigured(platform, app: recipient.target.app)
        }
        if let client = rawTokenClient {
            do {
                try relay.rawTokenHolds.take(client)
            } catch .client {
                throw APIError(
                    .tooManyHeldRequests,
                    "this address holds \(relay.rawTokenHolds.perClient) requests to raw push tokens already; register the device and use its alias",
                    headers: [.retryAfter: "\(max(1, Int(settings.replyTimeout.timeInterval.rounded(.up))))"])
            } catch {
                throw APIError.overloaded
            }
        }
        defer { if let client = rawTokenClient { relay.rawTokenHolds.release(client) } }
        return try await held(webhook, to: recipient, appData: appData)
    }

    private func held(_ webhook: WebhookRequest, to recipient: Recipient, appData: String?) async throws -> Asked {
        var webhook = webhook
        // Before the reply is opened: a refused request leaves nothing to clean up.
        try await targets.takePushes(for: [recipient.target], metrics: metrics)
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
            _ = try await submit(webhook, to: recipient, appData: appData, chargesAllowance: false)
        } catch {
            await relay.abandon(reply)
            throw error
        }
        switch await relay.answer(for: reply) {
        case .answered(let answer): return .answered(answer)
        case .shuttingDown: return .shuttingDown
        case .timedOut: break
        }
        let target = recipient.target
        let dead = (try? await devices.resolveWebhookToken(target.token, rawPlatform: target.destination.device).isDead) ?? false
        return dead ? .tokenDead : .timedOut
    }
}

extension APIError {
    /// The token is the alias of a device deleted since: its webhook URL is gone for good.
    static let deviceDeleted = APIError(
        .deviceDeleted, "the device this webhook URL belonged to was deleted; it receives nothing more"
    )

    static let tokenUnregistered = APIError(
        .tokenUnregistered, "the push service reported this device token as unregistered"
    )

    static func replyTimeout(_ settings: ServerSettings) -> APIError {
        APIError(
            .replyTimeout, "the device did not answer within \(Int(settings.replyTimeout.timeInterval.rounded(.up))) s"
        )
    }
}
