import Foundation
import HeraldWire

/// Reply URLs handed to devices: the durable half of the reply relay, shared by every process
/// on the database, so an answer that reaches one process completes a request held by another.
public protocol ReplyStore: Sendable {
    /// Opens a pending reply with a fresh unguessable id.
    func createReply(kind: String, now: Date, expiresAt: Date) async throws -> String
    /// Records a device's answer; only the first answer of a live reply is taken.
    func answerReply(id: String, answer: ReplyAnswer, now: Date) async throws -> ReplyAnswerOutcome
    /// The answers among `ids` that have arrived.
    func answeredReplies(ids: [String]) async throws -> [String: ReplyAnswer]
    /// Closes a reply whose caller stopped waiting; returns the answer if it arrived meanwhile.
    func expireReply(id: String, now: Date) async throws -> ReplyAnswer?
    /// Deletes replies that expired before `before` (their tombstones included); returns how many.
    func purgeReplies(expiredBefore before: Date) async throws -> Int
    /// Rows by state, for tests and metrics.
    func replyCounts() async throws -> ReplyCounts

    /// A cached device answer still fresh at `now`.
    func cachedReply(key: String, now: Date) async throws -> ReplyAnswer?
    /// Keeps `answer` under `key` until `until`, unless the fresh answers under `budget`'s prefix
    /// (one device's) would then hold more than its bytes; false when it was not kept.
    @discardableResult
    func cacheReply(key: String, answer: ReplyAnswer, until: Date, budget: CacheBudget?, now: Date) async throws -> Bool
    /// Removes cached answers whose key starts with `prefix` (a renamed or released address).
    func removeCachedReplies(prefix: String) async throws
    func purgeCachedReplies(now: Date) async throws -> Int
}

/// How much one owner (a device: every key starting with `prefix`) may keep cached.
public struct CacheBudget: Sendable, Hashable {
    public var prefix: String
    public var maxBytes: Int
    public init(prefix: String, maxBytes: Int) {
        self.prefix = prefix
        self.maxBytes = maxBytes
    }
}

extension ReplyStore {
    /// Keeps `answer` with no budget.
    public func cacheReply(key: String, answer: ReplyAnswer, until: Date) async throws {
        try await cacheReply(key: key, answer: answer, until: until, budget: nil, now: Date(timeIntervalSince1970: 0))
    }
}

/// A device's answer as it came: the JSON bytes and its `Cache-Control: max-age`, if any.
public struct ReplyAnswer: Sendable, Hashable {
    public var body: Data
    public var cacheMaxAge: Int?
    public init(body: Data, cacheMaxAge: Int? = nil) {
        self.body = body
        self.cacheMaxAge = cacheMaxAge
    }
}

/// What became of a device's POST to a reply URL.
public enum ReplyAnswerOutcome: Sendable, Hashable {
    case accepted
    case alreadyAnswered
    case expired
    case unknown
}

public struct ReplyCounts: Sendable, Hashable {
    public var pending: Int
    public var answered: Int
    public var expired: Int
    public var total: Int { pending + answered + expired }

    public init(pending: Int, answered: Int, expired: Int) {
        self.pending = pending
        self.answered = answered
        self.expired = expired
    }
}

/// LUD-16 usernames claimed by registered devices.
public protocol LightningAddressStore: Sendable {
    /// Claims `username` for the device, renaming its earlier name if it had one.
    func claimUsername(_ username: String, deviceID: String, now: Date) async throws -> UsernameClaim
    /// Releases the device's name; returns the name it had.
    func releaseUsername(deviceID: String) async throws -> String?
    /// The address and the device behind it.
    func lightningAddress(username: String) async throws -> LightningAddress?
    func lightningAddress(deviceID: String) async throws -> LightningAddress?
    /// Keeps the pay info the device last answered, for checking amounts and comments at the callback.
    func savePayInfo(_ info: StoredPayInfo, username: String, deviceID: String, now: Date) async throws
}

public enum UsernameClaim: Sendable, Hashable {
    /// The name is the device's now; `previous` is the name it replaced (a rename).
    case claimed(previous: String?)
    /// The device owned the name already.
    case unchanged
    /// Another device owns it.
    case taken
}

public struct LightningAddress: Sendable, Hashable {
    public var username: String
    public var device: Device
    public var payInfo: StoredPayInfo?

    public init(username: String, device: Device, payInfo: StoredPayInfo?) {
        self.username = username
        self.device = device
        self.payInfo = payInfo
    }
}

/// The parts of a device's LNURL-pay info the service checks and forwards.
public struct StoredPayInfo: Codable, Sendable, Hashable {
    public var minSendable: UInt64
    public var maxSendable: UInt64
    /// Exactly as the device sent it: the invoice's description hash commits to this string.
    public var metadata: String
    public var commentAllowed: Int?
    public init(minSendable: UInt64, maxSendable: UInt64, metadata: String, commentAllowed: Int?) {
        self.minSendable = minSendable
        self.maxSendable = maxSendable
        self.metadata = metadata
        self.commentAllowed = commentAllowed
    }
}
