import Foundation

/// How to reach FCM HTTP v1 for one Firebase project.
public struct FCMConfiguration: Sendable {
    /// FCM's production endpoint.
    public static let defaultBaseURL = "https://fcm.googleapis.com"
    /// The OAuth scope that allows sending.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    public var serviceAccount: ServiceAccount
    /// FCM's base URL, without a trailing slash; a local mock in tests.
    public var baseURL: String
    /// An access token is replaced this long before Google says it expires, so a send never
    /// races the expiry.
    public var accessTokenRefreshMargin: Duration
    /// The most one request (a send or a token fetch) may take.
    public var requestTimeout: Duration

    public init(
        serviceAccount: ServiceAccount,
        baseURL: String = FCMConfiguration.defaultBaseURL,
        accessTokenRefreshMargin: Duration = .seconds(60),
        requestTimeout: Duration = .seconds(30)
    ) {
        self.serviceAccount = serviceAccount
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.accessTokenRefreshMargin = accessTokenRefreshMargin
        self.requestTimeout = requestTimeout
    }

    /// `POST` here to send one message.
    public var sendURL: String {
        "\(baseURL)/v1/projects/\(serviceAccount.projectID)/messages:send"
    }
}
