import HeraldDevice

/// The one JSON object `herald-device handle` prints: the content flattened to the top, then
/// what was replied where.
struct HandleOutput: Encodable {
    var notificationType: String
    var title: String
    var body: String
    var category: String?
    var threadIdentifier: String?
    var interruptionLevel: String
    var relevanceScore: Double
    var disposition: String
    var reason: String?
    var timedOut: Bool
    var elapsedMilliseconds: Int
    var replies: [ReplyReport]

    init(_ result: HandlingResult) {
        notificationType = result.notificationType
        title = result.content.title
        body = result.content.body
        category = result.content.category
        threadIdentifier = result.content.threadIdentifier
        interruptionLevel = result.content.interruptionLevel.rawValue
        relevanceScore = result.content.relevanceScore
        disposition = result.disposition.rawValue
        reason = result.reason
        timedOut = result.timedOut
        elapsedMilliseconds = result.elapsedMilliseconds
        replies = result.replies
    }

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case title, body, category
        case threadIdentifier = "thread_identifier"
        case interruptionLevel = "interruption_level"
        case relevanceScore = "relevance_score"
        case disposition, reason
        case timedOut = "timed_out"
        case elapsedMilliseconds = "elapsed_ms"
        case replies
    }
}
