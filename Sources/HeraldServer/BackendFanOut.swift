import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire

/// Turns one backend push into one outbox job per live session of the user, through the same
/// intake as webhooks: group commit, retries and dead-token handling are one code path.
struct BackendFanOut: Sendable {
    let intake: OutboxIntake
    let sessions: any SessionStore
    let providers: PushRouter
    let metrics: HeraldMetrics
    /// Pushes per device token, shared with the webhook.
    let targetLimiter: TargetLimiter
    let jobTTL: Duration
    let now: @Sendable () -> Date

    struct Result: Sendable {
        /// One per targeted session, in session-id order.
        var jobIDs: [String]
        var droppedDead: Int
        /// Every job matched an earlier one's idempotency key: nothing new is pushed.
        var replayed: Bool
    }

    /// Enqueues `message` for every session of `userID` with notifications on and a live token.
    /// A session with a seal key gets its own sealed copy; the others share one clear payload.
    ///
    /// - Parameters:
    ///   - idempotencyPrefix: With the session id appended, each job's outbox idempotency key;
    ///     nil for none. User and session ids never contain `:`, so keys cannot collide.
    ///   - type: The metrics label (`backend_event`, `backend_welcome`).
    func send(_ message: PushMessage, userID: String, idempotencyPrefix: String?, type: String) async throws -> Result {
        let targets = try await sessions.pushTargets(userID: userID, now: now())
        let clearPayload = message.storedJSON()
        let expiresAt = now().addingTimeInterval(jobTTL.timeInterval)
        let notificationType = message.data["action"] ?? type
        var jobs: [NewJob] = []
        var sealed: [Bool] = []
        for session in targets.sessions {
            guard let token = session.pushToken, providers.provider(for: session.platform, app: session.app) != nil else {
                // The operator removed this app's or platform's credentials since the login:
                // nothing can reach it.
                continue
            }
            let prepared = try PushSealing.prepare(
                message, sealKey: session.sealKey, typeHint: notificationType,
                for: PushTarget(platform: session.platform, token: token, app: session.app), providers: providers
            )
            sealed.append(session.sealKey != nil)
            jobs.append(
                NewJob(
                    platform: session.platform,
                    token: token,
                    notificationType: notificationType,
                    payload: session.sealKey == nil ? clearPayload : prepared.storedJSON(),
                    idempotencyKey: idempotencyPrefix.map { "\($0):\(session.sessionID)" },
                    expiresAt: expiresAt,
                    app: session.app
                )
            )
        }
        // All sessions or none: a partial fan-out would make the backend's retry push some twice.
        try await targetLimiter.takePushes(
            for: jobs.map { PushTarget(platform: $0.platform, token: $0.token, app: $0.app) }, metrics: metrics)
        let results = try await submit(jobs)
        let fresh = results.filter { !$0.duplicate }.count
        for _ in 0..<fresh { metrics.received(type: type) }
        metrics.sealed(count: zip(results, sealed).filter { !$0.0.duplicate && $0.1 }.count)
        return Result(
            jobIDs: results.map(\.id),
            droppedDead: targets.droppedDead,
            replayed: !results.isEmpty && fresh == 0
        )
    }

    /// Submits concurrently so the jobs share one group commit, and keeps their order.
    private func submit(_ jobs: [NewJob]) async throws -> [EnqueueResult] {
        let intake = self.intake
        do {
            return try await withThrowingTaskGroup(of: (Int, EnqueueResult).self) { group in
                for (index, job) in jobs.enumerated() {
                    group.addTask { (index, try await intake.submit(job)) }
                }
                var results = [EnqueueResult?](repeating: nil, count: jobs.count)
                for try await (index, result) in group { results[index] = result }
                return results.compactMap { $0 }
            }
        } catch {
            throw APIError(intakeFailure: error)
        }
    }
}
