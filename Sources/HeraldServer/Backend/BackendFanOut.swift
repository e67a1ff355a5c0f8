import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire

/// Turns one backend push into one outbox job per live session of the user, through the same
/// intake as webhooks: group commit, retries and dead-token handling are one code path.
struct BackendFanOut: Sendable {
    let delivery: PushDelivery
    let sessions: any SessionStore
    let providers: PushRouter
    let now: @Sendable () -> Date

    struct Result: Sendable {
        /// One per targeted session, in session-id order.
        var jobIDs: [String]
        var droppedDead: Int
        /// Every job matched an earlier one's idempotency key: nothing new is pushed.
        var replayed: Bool
        /// A job's key came before with another body (``EnqueueResult/keyReused``).
        var keyReused = false
    }

    /// Enqueues `message` for every session of `userID` with notifications on and a live token,
    /// all sessions or none: a partial fan-out would make the backend's retry push some twice.
    /// A session with a seal key gets its own sealed copy; the others share one clear payload.
    ///
    /// - Parameters:
    ///   - idempotencyPrefix: With the session id appended, each job's outbox idempotency key;
    ///     nil for none. User and session ids never contain `:`, so keys cannot collide.
    ///   - type: The metrics label (`backend_event`, `backend_welcome`).
    func send(
        _ message: PushMessage, userID: String, idempotencyPrefix: String?, idempotencyFingerprint: String? = nil, type: String
    ) async throws -> Result {
        let targets = try await sessions.pushTargets(userID: userID, now: now())
        let recipients = targets.sessions.compactMap { session -> PushDelivery.Recipient? in
            // The operator removed this app's or platform's credentials since the login:
            // nothing can reach it.
            guard let token = session.pushToken, providers.provider(for: session.platform, app: session.app) != nil else { return nil }
            var recipient = PushDelivery.Recipient(
                target: PushTarget(platform: session.platform, token: token, app: session.app), sealKey: session.sealKey,
                idempotencyKey: idempotencyPrefix.map { "\($0):\(session.sessionID)" }
            )
            recipient.idempotencyFingerprint = idempotencyFingerprint
            return recipient
        }
        let results = try await delivery.submit(message, type: message.data["action"] ?? type, to: recipients, metric: type)
        return Result(
            jobIDs: results.map(\.id),
            droppedDead: targets.droppedDead,
            replayed: !results.isEmpty && results.allSatisfy(\.duplicate),
            keyReused: results.contains(where: \.keyReused)
        )
    }
}
