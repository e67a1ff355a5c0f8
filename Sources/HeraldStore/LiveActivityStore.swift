import Foundation
import HeraldWire

/// A swap's status as the activity shows it: its place among the swap's steps, and whether it
/// ends the swap.
public struct LiveActivityStep: Sendable, Hashable {
    public var status: String
    /// Higher is later; a status below the last one sent is stale and not sent.
    public var rank: Int
    public var isFinal: Bool

    public init(status: String, rank: Int, isFinal: Bool) {
        self.status = status
        self.rank = rank
        self.isFinal = isFinal
    }
}

/// The push a swap's new status calls for, decided and recorded in one transaction.
public struct LiveActivityPush: Sendable, Hashable {
    public var event: LiveActivityEvent
    /// The push-to-start token for `start`, the activity's own token otherwise.
    public var token: String
    /// ActivityKit's `timestamp`: strictly increasing per activity, even for two statuses in one second.
    public var timestamp: Int64
    /// The job to commit for it (recorded, so a later status can replace it while it waits).
    public var jobID: String
    /// Not before then: the previous push to this activity went out less than the minimum
    /// interval ago. Nil: at once.
    public var dueAt: Date?

    public init(event: LiveActivityEvent, token: String, timestamp: Int64, jobID: String, dueAt: Date?) {
        self.event = event
        self.token = token
        self.timestamp = timestamp
        self.jobID = jobID
        self.dueAt = dueAt
    }
}

/// Why a swap's status sends nothing to its activity.
public enum LiveActivitySkip: String, Sendable, Hashable {
    /// The device gave no push-to-start token, so no activity can be started.
    case noStartToken = "no_start_token"
    /// The activity was started but its app has not yet sent the activity's own token.
    case noActivityToken = "no_activity_token"
    /// A status at or below the last one recorded.
    case stale
    /// The activity has ended: nothing more for this swap.
    case ended
    /// A final status for a swap whose activity never started.
    case neverStarted = "never_started"
}

/// The tokens ActivityKit gives an app, and each swap's activity: what was sent last, so statuses
/// keep their order, the activity's timestamps increase, and updates keep Apple's budget.
public protocol LiveActivityStore: Sendable {
    /// The device's push-to-start token (`Activity.pushToStartTokenUpdates`); nil forgets it.
    func setLiveActivityStartToken(deviceID: String, token: String?, now: Date) async throws
    func liveActivityStartToken(deviceID: String) async throws -> String?
    /// The token iOS gave the started activity of `swapID` (`Activity.pushTokenUpdates`).
    func setLiveActivityToken(deviceID: String, swapID: String, token: String, now: Date) async throws
    /// Forgets the swap's activity (its token and what was sent); false when there was none.
    func deleteLiveActivity(deviceID: String, swapID: String) async throws -> Bool
    /// Decides what `step` sends to the swap's activity and records it, in one transaction:
    /// `start` to the push-to-start token for a swap's first non-final status, `update` or
    /// `end` to the activity's token after that. A push is due no sooner than `minimumInterval`
    /// after the previous one; an update still waiting for that is replaced (its job deleted)
    /// by the later status.
    func planLiveActivity(
        deviceID: String, swapID: String, step: LiveActivityStep, now: Date, minimumInterval: TimeInterval
    ) async throws -> Result<LiveActivityPush, LiveActivitySkipped>
}

/// A status that sends nothing, and why (an `Error` only so it can sit in a `Result`).
public struct LiveActivitySkipped: Error, Sendable, Hashable {
    public var reason: LiveActivitySkip
    public init(_ reason: LiveActivitySkip) { self.reason = reason }
}

/// The rule both stores apply once they have read the activity's row (nil: none yet).
public enum LiveActivityRule {
    /// The activity's row as a store keeps it.
    public struct Row: Sendable, Hashable {
        public var pushToken: String?
        public var lastRank: Int
        public var lastTimestamp: Int64
        public var lastSentAt: Date
        public var pendingJobID: String?
        public var pendingEvent: LiveActivityEvent?
        public var ended: Bool

        public init(
            pushToken: String?, lastRank: Int, lastTimestamp: Int64, lastSentAt: Date, pendingJobID: String?,
            pendingEvent: LiveActivityEvent?, ended: Bool
        ) {
            self.pushToken = pushToken
            self.lastRank = lastRank
            self.lastTimestamp = lastTimestamp
            self.lastSentAt = lastSentAt
            self.pendingJobID = pendingJobID
            self.pendingEvent = pendingEvent
            self.ended = ended
        }
    }

    /// What to send, the row to write, and the waiting update to replace (its job id), if any.
    public struct Decision: Sendable, Hashable {
        public var push: LiveActivityPush
        public var row: Row
        public var replaces: String?
    }

    public static func decide(
        existing: Row?, startToken: String?, step: LiveActivityStep, now: Date, minimumInterval: TimeInterval
    ) -> Result<Decision, LiveActivitySkipped> {
        let second = Int64(now.timeIntervalSince1970.rounded(.down))
        guard let existing else {
            guard !step.isFinal else { return .failure(.init(.neverStarted)) }
            guard let startToken else { return .failure(.init(.noStartToken)) }
            let push = LiveActivityPush(event: .start, token: startToken, timestamp: second, jobID: JobID.make(), dueAt: nil)
            let row = Row(
                pushToken: nil, lastRank: step.rank, lastTimestamp: second, lastSentAt: now, pendingJobID: push.jobID,
                pendingEvent: .start, ended: false)
            return .success(Decision(push: push, row: row, replaces: nil))
        }
        guard !existing.ended else { return .failure(.init(.ended)) }
        guard step.rank > existing.lastRank else { return .failure(.init(.stale)) }
        guard let token = existing.pushToken else { return .failure(.init(.noActivityToken)) }
        let dueAt: Date?
        var replaces: String?
        if existing.lastSentAt > now, existing.pendingEvent == .update {
            // An update still waiting for its slot gives way to this later status, which takes
            // its slot: the phone sees the latest, no more often than Apple's budget allows. (A
            // start must reach the phone, and nothing follows an end.)
            dueAt = existing.lastSentAt
            replaces = existing.pendingJobID
        } else {
            let earliest = existing.lastSentAt.addingTimeInterval(minimumInterval)
            dueAt = earliest > now ? earliest : nil
        }
        let push = LiveActivityPush(
            event: step.isFinal ? .end : .update, token: token, timestamp: max(second, existing.lastTimestamp + 1), jobID: JobID.make(),
            dueAt: dueAt)
        var row = existing
        row.lastRank = step.rank
        row.lastTimestamp = push.timestamp
        row.lastSentAt = dueAt ?? now
        row.pendingJobID = push.jobID
        row.pendingEvent = push.event
        row.ended = step.isFinal
        return .success(Decision(push: push, row: row, replaces: replaces))
    }
}
