import Foundation
import HeraldWire

/// How a reply is retried inside the deadline.
public struct ReplyPolicy: Sendable, Hashable {
    /// At most this many POSTs per reply.
    public var maxAttempts: Int
    /// The wait before the second attempt; doubled each time up to `maxBackoff`.
    public var initialBackoff: Duration
    public var maxBackoff: Duration
    /// The longest one attempt may take (bounded further by the deadline).
    public var attemptTimeout: Duration

    public init(
        maxAttempts: Int = 5, initialBackoff: Duration = .milliseconds(200), maxBackoff: Duration = .seconds(2),
        attemptTimeout: Duration = .seconds(8)
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.attemptTimeout = attemptTimeout
    }
}

/// What became of one reply.
public struct ReplyReport: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The receiver took it (2xx).
        case accepted
        /// Someone answered first (409): nothing left to do.
        case alreadyAnswered = "already_answered"
        /// The request is gone (404/410): the caller stopped waiting.
        case expired
        /// Refused for good (another 4xx, or a malformed URL).
        case refused
        /// No answer within the attempts or the deadline.
        case failed
    }

    public var url: String
    public var outcome: Outcome
    /// The last HTTP status seen, if any.
    public var status: Int?
    public var attempts: Int
    /// The JSON body that was sent.
    public var body: String
    public var cacheMaxAge: Int?

    public init(url: String, outcome: Outcome, status: Int?, attempts: Int, body: String, cacheMaxAge: Int?) {
        self.url = url
        self.outcome = outcome
        self.status = status
        self.attempts = attempts
        self.body = body
        self.cacheMaxAge = cacheMaxAge
    }

    enum CodingKeys: String, CodingKey {
        case url, outcome, status, attempts, body
        case cacheMaxAge = "cache_max_age"
    }

    /// Whether the answer reached the caller or was no longer needed.
    public var delivered: Bool { outcome == .accepted || outcome == .alreadyAnswered }
}

/// POSTs a JSON answer to a `reply_url`, retrying transient failures until the deadline.
struct ReplySender: Sendable {
    let transport: any ReplyTransport
    let policy: ReplyPolicy
    let clock: DeviceClock
    let log: DeviceLog

    /// Time kept back from the deadline so the content is still handed over after the last try.
    static let deadlineMargin: Duration = .milliseconds(100)

    func send<Body: Encodable>(_ body: Body, to url: String, cacheMaxAge: Int = 0, deadline: Deadline) async -> ReplyReport {
        let bytes = (try? WireJSON.encode(body)) ?? Data("{}".utf8)
        let text = String(decoding: bytes, as: UTF8.self)
        var headers = ["Content-Type": "application/json"]
        if let cache = ReplyCacheLifetime.headerValue(maxAge: cacheMaxAge) { headers["Cache-Control"] = cache }
        let request = ReplyRequest(url: url, body: bytes, headers: headers)
        let maxAge = cacheMaxAge > 0 ? cacheMaxAge : nil

        var attempts = 0
        var lastStatus: Int?
        var backoff = policy.initialBackoff
        while attempts < policy.maxAttempts {
            let remaining = deadline.remaining - Self.deadlineMargin
            guard remaining > .zero, !Task.isCancelled else { break }
            attempts += 1
            do {
                let status = try await transport.post(request, timeout: min(policy.attemptTimeout, remaining))
                lastStatus = status
                if let outcome = Self.finalOutcome(status: status) {
                    log(.info, "reply answered", ["url": url, "status": String(status), "attempt": String(attempts)])
                    return ReplyReport(url: url, outcome: outcome, status: status, attempts: attempts, body: text, cacheMaxAge: maxAge)
                }
                log(.warning, "reply will be retried", ["url": url, "status": String(status), "attempt": String(attempts)])
            } catch is InvalidReplyURL {
                log(.error, "reply URL is invalid", ["url": url])
                return ReplyReport(url: url, outcome: .refused, status: nil, attempts: attempts, body: text, cacheMaxAge: maxAge)
            } catch {
                log(.warning, "reply failed", ["url": url, "error": "\(error)", "attempt": String(attempts)])
            }
            // Only wait if another attempt still fits before the deadline.
            guard attempts < policy.maxAttempts, deadline.remaining - Self.deadlineMargin > backoff else { break }
            do { try await clock.sleep(backoff) } catch { break }
            backoff = min(backoff * 2, policy.maxBackoff)
        }
        return ReplyReport(url: url, outcome: .failed, status: lastStatus, attempts: attempts, body: text, cacheMaxAge: maxAge)
    }

    /// The outcome for a status that ends the retries, or `nil` to retry (408, 425, 429, 5xx).
    static func finalOutcome(status: Int) -> ReplyReport.Outcome? {
        switch status {
        case 200..<300: return .accepted
        case 409: return .alreadyAnswered
        case 404, 410: return .expired
        case 408, 425, 429, 500..<600: return nil
        default: return .refused
        }
    }
}
