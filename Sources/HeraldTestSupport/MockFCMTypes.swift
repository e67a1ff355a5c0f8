import Foundation

/// An answer the mock FCM send endpoint gives, shaped like FCM v1's errors
/// (`{"error":{"code","message","status","details":[{"@type":"…FcmError","errorCode"}]}}`).
public struct MockFCMAnswer: Sendable, Hashable {
    public var status: Int
    /// The google.rpc status (`NOT_FOUND`, `INVALID_ARGUMENT` …); nil for 200.
    public var rpcStatus: String?
    /// The FCM `errorCode` detail (`UNREGISTERED`, `QUOTA_EXCEEDED` …), when FCM gives one.
    public var errorCode: String?
    public var message: String?
    /// A `retry-after` header, in seconds.
    public var retryAfter: Int?

    public init(status: Int, rpcStatus: String?, errorCode: String?, message: String?, retryAfter: Int? = nil) {
        self.status = status
        self.rpcStatus = rpcStatus
        self.errorCode = errorCode
        self.message = message
        self.retryAfter = retryAfter
    }

    public static let success = MockFCMAnswer(status: 200, rpcStatus: nil, errorCode: nil, message: nil)
    /// The app was uninstalled or the token expired.
    public static let unregistered = MockFCMAnswer(
        status: 404,
        rpcStatus: "NOT_FOUND",
        errorCode: "UNREGISTERED",
        message: "Requested entity was not found."
    )
    /// A malformed message (not about the token).
    public static let invalidArgument = MockFCMAnswer(
        status: 400,
        rpcStatus: "INVALID_ARGUMENT",
        errorCode: "INVALID_ARGUMENT",
        message: "Request contains an invalid argument."
    )
    /// A token that is not an FCM registration token at all.
    public static let invalidRegistrationToken = MockFCMAnswer(
        status: 400,
        rpcStatus: "INVALID_ARGUMENT",
        errorCode: "INVALID_ARGUMENT",
        message: "The registration token is not a valid FCM registration token"
    )
    /// The access token was refused.
    public static let unauthenticated = MockFCMAnswer(
        status: 401,
        rpcStatus: "UNAUTHENTICATED",
        errorCode: nil,
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token."
    )
    public static let senderIDMismatch = MockFCMAnswer(
        status: 403,
        rpcStatus: "PERMISSION_DENIED",
        errorCode: "SENDER_ID_MISMATCH",
        message: "SenderId mismatch"
    )
    public static let internalError = MockFCMAnswer(
        status: 500,
        rpcStatus: "INTERNAL",
        errorCode: "INTERNAL",
        message: "Internal error encountered."
    )

    public static func quotaExceeded(retryAfter: Int? = nil) -> MockFCMAnswer {
        MockFCMAnswer(
            status: 429,
            rpcStatus: "RESOURCE_EXHAUSTED",
            errorCode: "QUOTA_EXCEEDED",
            message: "Quota exceeded for quota metric.",
            retryAfter: retryAfter
        )
    }

    public static func unavailable(retryAfter: Int? = nil) -> MockFCMAnswer {
        MockFCMAnswer(
            status: 503,
            rpcStatus: "UNAVAILABLE",
            errorCode: "UNAVAILABLE",
            message: "The service is currently unavailable.",
            retryAfter: retryAfter
        )
    }
}

/// An answer the mock token endpoint gives instead of a token.
public struct MockOAuthAnswer: Sendable, Hashable {
    public var status: Int
    /// The OAuth `error` (`invalid_grant` …).
    public var error: String
    public var description: String?

    public init(status: Int, error: String, description: String? = nil) {
        self.status = status
        self.error = error
        self.description = description
    }

    public static let invalidGrant = MockOAuthAnswer(status: 400, error: "invalid_grant", description: "Invalid JWT Signature.")
    public static let serverError = MockOAuthAnswer(status: 500, error: "internal_failure")
}

/// One request to the mock token endpoint.
public struct MockOAuthRequest: Sendable, Hashable {
    public var grantType: String?
    /// The verified assertion's claims; nil when it did not verify.
    public var assertion: Assertion?
    public var arrival: Date
    /// The access token issued, or nil when the endpoint refused.
    public var issuedToken: String?
    /// Why it refused (an OAuth `error`), when it did.
    public var error: String?

    public struct Assertion: Sendable, Hashable {
        public var algorithm: String
        public var keyID: String
        public var issuer: String
        public var scope: String
        public var audience: String
        public var issuedAt: Int
        public var expiresAt: Int
    }
}

/// One request to the mock FCM send endpoint.
public struct MockFCMRequest: Sendable, Hashable {
    public var projectID: String
    /// Headers by lower-cased name.
    public var headers: [String: String]
    /// The body, byte for byte.
    public var body: Data
    public var arrival: Date
    /// `message.token` from the body.
    public var registrationToken: String?
    /// The bearer access token as sent.
    public var accessToken: String?
    public var connection: Int
    public var answer: MockFCMAnswer

    /// Whether FCM accepted it.
    public var accepted: Bool { answer.status == 200 }

    /// `message` from the body, as a JSON object (for assertions).
    public var message: [String: Any]? {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["message"] as? [String: Any]
    }
}
