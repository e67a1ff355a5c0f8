import Foundation
import HeraldPush
import HeraldStore
import HeraldWire
import Logging

/// A swap's progress as an iOS Live Activity, driven by the `swap.update` webhooks Herald already
/// gets: the first status starts it through the device's push-to-start token, later ones update
/// it through the activity's own token, a final one ends it. The wallet's own `swap_updated` push
/// goes out as before; this is beside it.
struct SwapActivities: Sendable {
    let store: any LiveActivityStore
    let delivery: PushDelivery
    let settings: ServerSettings
    let metrics: HeraldMetrics
    let now: @Sendable () -> Date
    let logger: Logger

    /// Apple's budget: no more than one update a second to an activity.
    static let minimumInterval: TimeInterval = 1
    /// An ended activity stays on the Lock Screen this long.
    static let dismissAfter: Int = 15 * 60
    /// Content older than this shows as out of date.
    static let staleAfter: Int = 60 * 60

    /// Starts, updates or ends the activity of the swap `webhook` names on `device`. Never
    /// throws: the webhook's own push is committed already, and the activity is a view of it.
    func swapUpdated(_ webhook: WebhookRequest, device: Device) async {
        guard device.platform == .ios, webhook.notificationType == .swapUpdated,
            let swapID = webhook.data["id"]?.stringValue, Self.isValidSwapID(swapID),
            let status = webhook.data["status"]?.stringValue, let step = SwapSteps.step(for: status)
        else { return }
        let moment = now()
        do {
            let plan = try await store.planLiveActivity(
                deviceID: device.id, swapID: swapID, step: step.store, now: moment, minimumInterval: Self.minimumInterval)
            switch plan {
            case .failure(let skipped):
                metrics.liveActivity("skipped_" + skipped.reason.rawValue)
            case .success(let push):
                let message = try Self.message(
                    push, swapID: swapID, step: step, attributesType: settings.liveActivities.attributesType, now: moment)
                // Not sealed: ActivityKit reads the payload itself, with no extension to open it.
                var recipient = PushDelivery.Recipient(target: PushTarget(platform: .ios, token: push.token, app: device.app))
                recipient.jobID = push.jobID
                _ = try await delivery.submit(
                    message, type: Self.jobType, to: [recipient], metric: nil, chargesAllowance: false, dueAt: push.dueAt)
                metrics.liveActivity(push.event.rawValue)
            }
        } catch {
            metrics.liveActivity("failed")
            logger.error(
                "could not drive a swap's Live Activity", metadata: ["device-id": "\(device.id)", "error": "\(error)"])
        }
    }

    /// The job type of ActivityKit pushes.
    static let jobType = "live_activity"

    /// A swap id names a row and travels in the payload: bounded, printable.
    static func isValidSwapID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The APNs request of one push: ActivityKit's payload, `liveactivity` to the app's Live
    /// Activity topic (the provider adds the suffix), at the event's priority
    /// (``APNsHeaders/PushType/priority``).
    static func message(
        _ push: LiveActivityPush, swapID: String, step: SwapSteps.Step, attributesType: String, now: Date
    ) throws -> PushMessage {
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        let state = SwapActivityContentState(
            status: step.store.status, step: step.number, steps: SwapSteps.count, title: step.title, updatedAt: second)
        let timestamp = Int(push.timestamp)
        var aps: LiveActivityAPS
        switch push.event {
        case .start:
            aps = .start(
                timestamp: timestamp, attributes: SwapActivityAttributes(swapID: swapID), contentState: state,
                alert: NotificationText(title: "Swap in progress", body: step.title), staleDate: second + staleAfter)
            aps.attributesType = attributesType
        case .update:
            aps = .update(timestamp: timestamp, contentState: state, staleDate: second + staleAfter)
        case .end:
            aps = .end(timestamp: timestamp, contentState: state, dismissalDate: second + dismissAfter)
            aps.alert = NotificationText(title: step.succeeded ? "Swap complete" : "Swap failed", body: step.title)
        }
        let body = String(decoding: try WireJSON.encode(LiveActivityPayload(aps: aps)), as: UTF8.self)
        return PushMessage(
            kind: .alert, data: [:], verbatim: PushMessage.Verbatim(apns: APNsHeaders(pushType: .liveActivity(push.event)), body: body))
    }
}

/// Breez's (Boltz's) swap statuses as a Live Activity's steps: their order, which end the swap,
/// and the line each shows.
enum SwapSteps {
    struct Step: Sendable, Hashable {
        var store: LiveActivityStep
        var number: Int
        var title: String
        var succeeded: Bool
    }

    static let count = 4

    /// Nil for a status Herald does not know: its order is unknown, so the activity is left as it is.
    static func step(for status: String) -> Step? {
        switch status {
        case "swap.created", "invoice.set":
            return step(status, 1, "Swap created")
        case "transaction.mempool", "invoice.pending":
            return step(status, 2, "Payment seen, waiting for confirmation")
        case "transaction.confirmed", "invoice.paid", "transaction.server.mempool":
            return step(status, 3, "Payment confirmed")
        case "transaction.server.confirmed", "transaction.claim.pending":
            return step(status, 3, "Claiming your funds", rank: 4)
        case "transaction.claimed", "invoice.settled":
            return Step(store: LiveActivityStep(status: status, rank: 9, isFinal: true), number: count, title: "Swap complete", succeeded: true)
        case "invoice.failedToPay", "transaction.lockupFailed", "swap.expired", "invoice.expired", "transaction.failed",
            "transaction.refunded":
            let title = status == "transaction.refunded" ? "Swap refunded" : status.hasSuffix("expired") ? "Swap expired" : "Swap failed"
            return Step(store: LiveActivityStep(status: status, rank: 9, isFinal: true), number: count, title: title, succeeded: false)
        default:
            return nil
        }
    }

    private static func step(_ status: String, _ number: Int, _ title: String, rank: Int? = nil) -> Step {
        Step(store: LiveActivityStep(status: status, rank: rank ?? number, isFinal: false), number: number, title: title, succeeded: false)
    }
}
