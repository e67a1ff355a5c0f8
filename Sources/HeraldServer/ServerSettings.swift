import Foundation

/// What the routes need to know about how the operator runs this NDS.
public struct ServerSettings: Sendable {
    /// The base URL third parties reach this server at; webhook URLs handed to apps start with it.
    public var publicURL: String
    /// Accept raw push tokens on the webhook, as Breez-style integrations send them. Off makes
    /// the webhook answer only registered aliases (no open push relay).
    public var acceptRawTokens: Bool
    /// How long a webhook's push is worth delivering; later it is dead-lettered.
    public var jobTTL: Duration
    /// Device registrations allowed per client address per minute.
    public var registrationsPerMinute: Int
    /// Whether the local development provider is in use (enables the device push feed).
    public var localProvider: Bool

    public init(
        publicURL: String,
        acceptRawTokens: Bool = true,
        jobTTL: Duration = .seconds(3600),
        registrationsPerMinute: Int = 30,
        localProvider: Bool = false
    ) {
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.acceptRawTokens = acceptRawTokens
        self.jobTTL = jobTTL
        self.registrationsPerMinute = registrationsPerMinute
        self.localProvider = localProvider
    }
}
