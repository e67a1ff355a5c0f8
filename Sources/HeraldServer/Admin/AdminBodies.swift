import Foundation
import HeraldPush
import HeraldStore

/// One dead letter as `GET /api/v1/admin/dead-letters` shows it: the token redacted.
struct DeadLetterView: Codable, Sendable {
    var id: String
    var reason: String
    var lastError: String?
    var platform: String
    var token: String
    var notificationType: String
    var attempts: Int
    var createdAt: String
    var firstAttemptAt: String?
    var lastAttemptAt: String?
    var deadAt: String
    var providerAnswer: String?
    var tokenDead: Bool

    init(_ letter: DeadLetter) {
        id = letter.id
        reason = letter.reason
        lastError = letter.lastError
        platform = letter.destination.rawValue
        token = PushTarget.shown(destination: letter.destination, token: letter.token)
        notificationType = letter.notificationType
        attempts = letter.attempts
        createdAt = letter.createdAt.formatted(.iso8601)
        firstAttemptAt = letter.firstAttemptAt?.formatted(.iso8601)
        lastAttemptAt = letter.lastAttemptAt?.formatted(.iso8601)
        deadAt = letter.finishedAt.formatted(.iso8601)
        providerAnswer = letter.providerAnswer
        tokenDead = letter.tokenDead
    }

    enum CodingKeys: String, CodingKey {
        case id, reason, platform, token, attempts
        case lastError = "last_error"
        case notificationType = "notification_type"
        case createdAt = "created_at"
        case firstAttemptAt = "first_attempt_at"
        case lastAttemptAt = "last_attempt_at"
        case deadAt = "dead_at"
        case providerAnswer = "provider_answer"
        case tokenDead = "token_dead"
    }
}

struct DeadLetterListView: Codable, Sendable {
    var deadLetters: [DeadLetterView]
    /// Pass as `cursor` for the next page; absent on the last.
    var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case deadLetters = "dead_letters"
        case nextCursor = "next_cursor"
    }
}

/// The answer to replaying one letter: the new job, and whether this call made it.
struct ReplayView: Codable, Sendable {
    var id: String
    var jobID: String
    /// False when an earlier replay made the job (nothing new was enqueued).
    var replayed: Bool

    enum CodingKeys: String, CodingKey {
        case id, replayed
        case jobID = "job_id"
    }
}

struct BulkReplayView: Codable, Sendable {
    var replayed: Int
    var jobIDs: [String]
    var skippedTokenDead: Int

    enum CodingKeys: String, CodingKey {
        case replayed
        case jobIDs = "job_ids"
        case skippedTokenDead = "skipped_token_dead"
    }
}

struct PurgeView: Codable, Sendable {
    var purged: Int
    /// Of those, letters replayed before: the list showed only the others.
    var replayed: Int?
}

/// Pending jobs by state.
struct OutboxCountsView: Codable, Sendable {
    var pending: Int
    var leased: Int
    var retrying: Int
    var total: Int

    init(_ counts: OutboxCounts) {
        pending = counts.pending
        leased = counts.leased
        retrying = counts.retrying
        total = counts.total
    }
}

/// `GET /api/v1/admin/outbox`: totals, and the same counts by platform and by app.
struct OutboxView: Codable, Sendable {
    var pending: Int
    var leased: Int
    var retrying: Int
    var total: Int
    var byPlatform: [String: OutboxCountsView]
    var byApp: [String: OutboxCountsView]
    var oldestDueAt: String?
    var deadLetters: Int
    var deadTokens: Int

    init(_ summary: OutboxSummary) {
        pending = summary.total.pending
        leased = summary.total.leased
        retrying = summary.total.retrying
        total = summary.total.total
        byPlatform = Dictionary(uniqueKeysWithValues: summary.byDestination.map { ($0.key.rawValue, OutboxCountsView($0.value)) })
        byApp = summary.byApp.mapValues(OutboxCountsView.init)
        oldestDueAt = summary.oldestDueAt?.formatted(.iso8601)
        deadLetters = summary.deadLetters
        deadTokens = summary.deadTokens
    }

    enum CodingKeys: String, CodingKey {
        case pending, leased, retrying, total
        case byPlatform = "by_platform"
        case byApp = "by_app"
        case oldestDueAt = "oldest_due_at"
        case deadLetters = "dead_letters"
        case deadTokens = "dead_tokens"
    }
}
