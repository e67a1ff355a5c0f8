import Foundation

/// How to reach APNs and sign provider tokens for one app.
public struct APNsConfiguration: Sendable {
    /// Which APNs to talk to. A value rather than a flag, so tests and local look-alikes are
    /// just another environment.
    public enum Environment: Sendable, Hashable {
        /// `https://api.push.apple.com`: apps from the App Store and TestFlight.
        case production
        /// `https://api.sandbox.push.apple.com`: apps built for development.
        case sandbox
        /// Any other base URL (a local mock, a proxy), without a trailing slash.
        case custom(String)

        /// The base URL requests go to.
        public var baseURL: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .sandbox: "https://api.sandbox.push.apple.com"
            case .custom(let url): url.hasSuffix("/") ? String(url.dropLast()) : url
            }
        }
    }

    /// Apple refuses a new provider token more often than every 20 minutes
    /// (`TooManyProviderTokenUpdates`) and one older than 60 minutes (`ExpiredProviderToken`);
    /// 20…50 minutes keeps a margin on both sides.
    public static let tokenRefreshRange: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(50 * 60)

    /// The `.p8` signing key from the Apple developer account: PKCS#8 PEM, P-256.
    public var signingKeyPEM: String
    /// The key's id (the `kid` of every provider token).
    public var keyID: String
    /// The developer team id (the `iss` of every provider token).
    public var teamID: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    public var environment: Environment
    /// How long one provider token is reused. Clamped to ``tokenRefreshRange``.
    public var tokenRefreshInterval: Duration {
        didSet { tokenRefreshInterval = Self.clamp(tokenRefreshInterval) }
    }
    /// The most one send may take, connection set-up included.
    public var requestTimeout: Duration

    public init(
        signingKeyPEM: String,
        keyID: String,
        teamID: String,
        topic: String,
        environment: Environment,
        tokenRefreshInterval: Duration = .seconds(40 * 60),
        requestTimeout: Duration = .seconds(30)
    ) {
        self.signingKeyPEM = signingKeyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.environment = environment
        self.tokenRefreshInterval = Self.clamp(tokenRefreshInterval)
        self.requestTimeout = requestTimeout
    }

    private static func clamp(_ interval: Duration) -> Duration {
        min(max(interval, tokenRefreshRange.lowerBound), tokenRefreshRange.upperBound)
    }
}

extension APNsConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// Everything but the signing key, so a configuration can be logged.
    public var description: String {
        "APNsConfiguration(keyID: \(keyID), teamID: \(teamID), topic: \(topic), "
            + "environment: \(environment.baseURL), tokenRefreshInterval: \(tokenRefreshInterval))"
    }

    public var debugDescription: String { description }
}
