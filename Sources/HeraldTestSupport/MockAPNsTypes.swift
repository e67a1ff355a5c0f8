import Foundation

/// An answer the mock APNs gives, as Apple documents them.
public struct MockAPNsAnswer: Sendable, Hashable {
    public var status: Int
    /// The `reason` of the JSON body; nil for 200.
    public var reason: String?
    /// A `retry-after` header, in seconds.
    public var retryAfter: Int?
    /// Held this long before it is sent: a stalled service, which a sender sees as a timeout.
    public var stall: Duration?

    public init(status: Int, reason: String?, retryAfter: Int? = nil, stall: Duration? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
        self.stall = stall
    }

    /// APNs stalls: nothing for `duration`, then a 503 (if the sender is still waiting).
    public static func stalled(for duration: Duration) -> MockAPNsAnswer {
        MockAPNsAnswer(status: 503, reason: "ServiceUnavailable", stall: duration)
    }

    public static let success = MockAPNsAnswer(status: 200, reason: nil)
    public static let badDeviceToken = MockAPNsAnswer(status: 400, reason: "BadDeviceToken")
    public static let deviceTokenNotForTopic = MockAPNsAnswer(status: 400, reason: "DeviceTokenNotForTopic")
    public static let expiredProviderToken = MockAPNsAnswer(status: 403, reason: "ExpiredProviderToken")
    public static let invalidProviderToken = MockAPNsAnswer(status: 403, reason: "InvalidProviderToken")
    /// 410 with a `timestamp`: the app was removed from the device.
    public static let unregistered = MockAPNsAnswer(status: 410, reason: "Unregistered")
    public static let payloadTooLarge = MockAPNsAnswer(status: 413, reason: "PayloadTooLarge")
    public static let internalServerError = MockAPNsAnswer(status: 500, reason: "InternalServerError")

    public static func tooManyRequests(retryAfter: Int? = nil) -> MockAPNsAnswer {
        MockAPNsAnswer(status: 429, reason: "TooManyRequests", retryAfter: retryAfter)
    }

    public static func serviceUnavailable(retryAfter: Int? = nil) -> MockAPNsAnswer {
        MockAPNsAnswer(status: 503, reason: "ServiceUnavailable", retryAfter: retryAfter)
    }
}

/// One request the mock APNs received, and what it answered.
public struct MockAPNsRequest: Sendable, Hashable {
    /// The device token from the path (`/3/device/<token>`).
    public var deviceToken: String
    /// Headers by lower-cased name (`apns-topic`, `apns-push-type`, `authorization` …).
    public var headers: [String: String]
    /// Every header as it arrived, in order (pseudo-headers excepted).
    public var orderedHeaders: [[String]] = []
    /// The body, byte for byte.
    public var body: Data
    /// Wall-clock arrival time.
    public var arrival: Date
    /// The bearer token, exactly as sent.
    public var providerToken: String?
    /// The verified token's claims (nil when it did not verify).
    public var claims: Claims?
    /// A number per TLS connection, in order of first use: requests on one HTTP/2 connection
    /// share it.
    public var connection: Int
    /// The HTTP/2 stream id: on one connection, a lower id was opened (written) first.
    public var stream: Int?
    public var answer: MockAPNsAnswer

    /// The claims of a provider token that verified with the key's public half.
    public struct Claims: Sendable, Hashable {
        public var keyID: String
        public var algorithm: String
        public var issuer: String
        /// Seconds since 1970, as the integer on the wire.
        public var issuedAt: Int
    }

    /// Whether APNs accepted it (200).
    public var accepted: Bool { answer.status == 200 }

    /// The body as a JSON object (for assertions).
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }
}
