/// What the extension shows for a push: the platform-neutral part of `UNNotificationContent`
/// (or an Android notification).
public struct NotificationContent: Sendable, Hashable, Codable {
    public var title: String
    public var body: String
    /// The notification category (iOS actions, e.g. `INCOMING_PAYMENT` with "Open Now").
    public var category: String?
    /// Groups and replaces related notifications (iOS thread identifier, Android channel).
    public var threadIdentifier: String?
    public var interruptionLevel: InterruptionLevel
    /// 0…1: how the system ranks it in the summary.
    public var relevanceScore: Double

    public init(
        title: String,
        body: String,
        category: String? = nil,
        threadIdentifier: String? = nil,
        interruptionLevel: InterruptionLevel = .active,
        relevanceScore: Double = 0.5
    ) {
        self.title = title
        self.body = body
        self.category = category
        self.threadIdentifier = threadIdentifier
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
    }

    enum CodingKeys: String, CodingKey {
        case title, body, category
        case threadIdentifier = "thread_identifier"
        case interruptionLevel = "interruption_level"
        case relevanceScore = "relevance_score"
    }
}

/// How loudly a notification arrives. Never `critical`: that needs an entitlement from Apple.
public enum InterruptionLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
}
