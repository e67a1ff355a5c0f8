import Foundation
import HeraldWire

/// Operators' view of the outbox: dead letters to inspect, replay or purge, and the queue's shape.
///
/// A dead letter is a job in state `dead`. Replaying one enqueues a new job with its push and
/// marks the letter with the new job's id, in one transaction, so a second replay (or many at
/// once) finds it marked and adds nothing.
public protocol DeadLetterStore: Sendable {
    /// Dead letters not yet replayed that match `filter`, newest first, at most `limit`, after
    /// `cursor` (the ``DeadLetterPage/next`` of the previous page).
    func deadLetters(matching filter: DeadLetterFilter, limit: Int, after cursor: DeadLetterCursor?) async throws
        -> DeadLetterPage
    /// Enqueues the letter's push again as a new job (see ``ReplayPlan``).
    func replayDeadLetter(id: String, plan: ReplayPlan) async throws -> ReplayOutcome
    /// Replays up to `limit` matching letters (oldest first); letters for dead tokens are skipped and counted.
    func replayDeadLetters(matching filter: DeadLetterFilter, limit: Int, plan: ReplayPlan) async throws -> BulkReplay
    /// Deletes one dead letter (replayed or not); false when there is no dead letter with that id.
    func purgeDeadLetter(id: String) async throws -> Bool
    /// Deletes every dead letter matching `filter`, replayed ones included: how many, and how many
    /// of them had been replayed (the list shows only the others).
    func purgeDeadLetters(matching filter: DeadLetterFilter) async throws -> DeadLetterPurge
    /// The queue as an operator reads it. Reads the pending jobs' index: fine every few seconds.
    func outboxSummary(now: Date) async throws -> OutboxSummary
}

/// Which dead letters an operator means. Empty fields match everything.
public struct DeadLetterFilter: Sendable, Hashable {
    /// The reason's code: `ttl_expired` matches `ttl_expired` and `ttl_expired: <answer>`.
    public var reason: String?
    public var destination: JobDestination?

    public init(reason: String? = nil, destination: JobDestination? = nil) {
        self.reason = reason
        self.destination = destination
    }
}

/// Where a page of dead letters ended: the last letter's finishing moment and id.
public struct DeadLetterCursor: Sendable, Hashable {
    public var finishedAt: Double
    public var id: String

    public init(finishedAt: Double, id: String) {
        self.finishedAt = finishedAt
        self.id = id
    }

    /// The opaque text a client hands back (`<finished_at>~<id>`, base64url).
    public var text: String {
        Data("\(finishedAt)~\(id)".utf8).base64URLEncodedString
    }

    /// Parses ``text``; nil for anything else.
    public init?(text: String) {
        guard text.count <= 512, let data = Data(base64URL: text), let decoded = String(data: data, encoding: .utf8),
            let split = decoded.firstIndex(of: "~"), let finishedAt = Double(decoded[..<split]), finishedAt.isFinite
        else { return nil }
        self.init(finishedAt: finishedAt, id: String(decoded[decoded.index(after: split)...]))
    }
}

/// One dead letter.
public struct DeadLetter: Sendable, Hashable {
    public var id: String
    public var destination: JobDestination
    /// The full push token: callers redact it before showing it.
    public var token: String
    public var notificationType: String
    /// The reason's code (`ttl_expired`, `permanent`, `max_attempts`, `token_unregistered` …).
    public var reason: String
    /// The reason as recorded (`ttl_expired: 503 ServiceUnavailable`).
    public var lastError: String?
    /// The push service's last answer; nil when it was never asked.
    public var providerAnswer: String?
    public var attempts: Int
    public var createdAt: Date
    public var firstAttemptAt: Date?
    public var lastAttemptAt: Date?
    /// When it was dead-lettered.
    public var finishedAt: Date
    /// Where a page ending at this letter ends (the stored moment, exactly as the store keeps it).
    public var position: DeadLetterCursor
    /// Whether the token is marked dead (such letters cannot be replayed).
    public var tokenDead: Bool

    public init(
        id: String, destination: JobDestination, token: String, notificationType: String, lastError: String?,
        providerAnswer: String?, attempts: Int, createdAt: Date, firstAttemptAt: Date?, lastAttemptAt: Date?,
        finishedAt: Double, tokenDead: Bool
    ) {
        self.id = id
        self.destination = destination
        self.token = token
        self.notificationType = notificationType
        self.reason = DeadLetter.reasonCode(lastError)
        self.lastError = lastError
        self.providerAnswer = providerAnswer
        self.attempts = attempts
        self.createdAt = createdAt
        self.firstAttemptAt = firstAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.finishedAt = Date(timeIntervalSince1970: finishedAt)
        self.position = DeadLetterCursor(finishedAt: finishedAt, id: id)
        self.tokenDead = tokenDead
    }

    /// `ttl_expired: 503 …` → `ttl_expired`.
    public static func reasonCode(_ lastError: String?) -> String {
        guard let lastError else { return "unknown" }
        return String(lastError.prefix { $0 != ":" })
    }
}

public struct DeadLetterPage: Sendable, Hashable {
    public var letters: [DeadLetter]
    /// Hand back for the next page; nil when this page is the last.
    public var next: DeadLetterCursor?

    public init(letters: [DeadLetter], next: DeadLetterCursor?) {
        self.letters = letters
        self.next = next
    }
}

/// What a purge by filter deleted.
public struct DeadLetterPurge: Sendable, Hashable {
    /// Every letter deleted.
    public var purged: Int
    /// Of those, the letters replayed before (each already has its new job).
    public var replayed: Int
    public init(purged: Int, replayed: Int) {
        self.purged = purged
        self.replayed = replayed
    }
}

/// How a replayed letter's new job is made. The new job keeps the letter's time to live
/// (expires that long after `now`); `rewrite` gives its payload that new expiry (the stored
/// push carries its own, already past), and is called inside the store's transaction.
public struct ReplayPlan: Sendable {
    public var now: Date
    public var rewrite: @Sendable (_ payload: Data, _ expiresAt: Date) -> Data

    public init(now: Date, rewrite: @escaping @Sendable (_ payload: Data, _ expiresAt: Date) -> Data = { data, _ in data }) {
        self.now = now
        self.rewrite = rewrite
    }

    /// The new job for a letter first made at `createdAt` to expire at `expiresAt`, sent with
    /// the letter's own app's credentials.
    public func newJob(
        destination: JobDestination, token: String, notificationType: String, payload: Data, createdAt: Date, expiresAt: Date,
        app: String
    ) -> NewJob {
        let ttl = max(60, expiresAt.timeIntervalSince(createdAt))
        let newExpiry = now.addingTimeInterval(ttl)
        return NewJob(
            destination: destination, token: token, notificationType: notificationType,
            payload: rewrite(payload, newExpiry), idempotencyKey: nil, expiresAt: newExpiry, app: app
        )
    }
}

/// What replaying one letter did.
public enum ReplayOutcome: Sendable, Hashable {
    /// A new job was enqueued.
    case replayed(jobID: String)
    /// Replayed before, as this job: nothing new.
    case alreadyReplayed(jobID: String)
    /// The push token is marked dead: not replayed.
    case tokenDead
    /// No dead letter has this id.
    case notFound
}

/// What replaying by filter did.
public struct BulkReplay: Sendable, Hashable {
    /// The new jobs' ids.
    public var jobIDs: [String]
    /// Letters left alone because their token is dead.
    public var skippedTokenDead: Int

    public init(jobIDs: [String], skippedTokenDead: Int) {
        self.jobIDs = jobIDs
        self.skippedTokenDead = skippedTokenDead
    }
}

/// Pending jobs by what they wait for.
public struct OutboxCounts: Sendable, Hashable {
    /// Never tried yet, not leased.
    public var pending: Int = 0
    /// Held by a dispatcher right now.
    public var leased: Int = 0
    /// Tried at least once, waiting for their next attempt.
    public var retrying: Int = 0

    public init(pending: Int = 0, leased: Int = 0, retrying: Int = 0) {
        self.pending = pending
        self.leased = leased
        self.retrying = retrying
    }

    public var total: Int { pending + leased + retrying }
}

/// The queue at one moment.
public struct OutboxSummary: Sendable, Hashable {
    public var total: OutboxCounts
    public var byDestination: [JobDestination: OutboxCounts]
    /// The same counts by the app whose credentials send the jobs.
    public var byApp: [String: OutboxCounts] = [:]
    /// The earliest next attempt of any pending job.
    public var oldestDueAt: Date?
    /// Dead letters not yet replayed.
    public var deadLetters: Int
    public var deadTokens: Int

    public init(
        total: OutboxCounts, byDestination: [JobDestination: OutboxCounts], oldestDueAt: Date?, deadLetters: Int, deadTokens: Int
    ) {
        self.total = total
        self.byDestination = byDestination
        self.oldestDueAt = oldestDueAt
        self.deadLetters = deadLetters
        self.deadTokens = deadTokens
    }

    /// Adds one group's count (the stores read them grouped by destination, app, lease and attempts).
    public mutating func add(destination: JobDestination, app: String, leased: Bool, tried: Bool, count: Int) {
        func add(_ counts: inout OutboxCounts) {
            if leased {
                counts.leased += count
            } else if tried {
                counts.retrying += count
            } else {
                counts.pending += count
            }
        }
        add(&total)
        add(&byDestination[destination, default: OutboxCounts()])
        add(&byApp[app, default: OutboxCounts()])
    }
}
