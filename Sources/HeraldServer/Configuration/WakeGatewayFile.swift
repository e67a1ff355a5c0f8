import Configuration
import Foundation
import HeraldWake
import HeraldWire

/// One topic producers may wake devices on through the wake gateway.
public struct WakeGatewayTopic: Sendable, Hashable {
    public var name: String
    public var urgency: WakeUrgency
    /// A wake is stale this long after it was made: its pushes expire then.
    public var deadlineSeconds: Int
    /// A device that has not acknowledged `handled` this long after the wake gets the fallback alert.
    public var fallbackAfterSeconds: Int
    /// Whether a visible fallback alert may be shown for the topic.
    public var alertable: Bool
    /// The alerts' and the fallback's text; nil for a topic that only ever wakes silently.
    public var text: NotificationText?
    public var description: String

    public init(
        name: String, urgency: WakeUrgency = .background, deadlineSeconds: Int = 60, fallbackAfterSeconds: Int = 15, alertable: Bool = false,
        text: NotificationText? = nil, description: String = ""
    ) {
        self.name = name
        self.urgency = urgency
        self.deadlineSeconds = deadlineSeconds
        self.fallbackAfterSeconds = fallbackAfterSeconds
        self.alertable = alertable
        self.text = text
        self.description = description
    }
}

/// The wake gateway (Bitkit's device API): the audience registrations are signed for, and the
/// topics.
public struct WakeGatewaySettings: Sendable, Hashable {
    /// Registrations are signed for it; nil: `public_url`'s host.
    public var audience: String?
    public var topics: [String: WakeGatewayTopic]

    public init(audience: String? = nil, topics: [String: WakeGatewayTopic] = [:]) {
        self.audience = audience
        self.topics = topics
    }

    /// The topic a wake names; nil for one nobody configured.
    public func topic(_ name: String) -> WakeGatewayTopic? { topics[name] }
}

/// The configuration file's `wake_gateway.topics` section. Topic names hold dots and capitals,
/// so no environment variable can spell them: like `apps`, the names come from the file and
/// each topic's fields through the configuration's one reader.
///
/// ```yaml
/// wake_gateway:
///   audience: wake.example.com
///   topics:
///     blocktank.incomingHtlc:
///       urgency: time_sensitive
///       deadline_secs: 60
///       fallback_after_secs: 15
///       alertable: true
///       title: Incoming Payment
///       body: Open Bitkit now to receive your payment
///       description: An HTLC waits for the wallet
/// ```
enum WakeGatewayFile {
    /// The keys one topic takes.
    static let topicKeys = ["urgency", "deadline_secs", "fallback_after_secs", "alertable", "title", "body", "description"]

    static func topicNames(in parsed: ConfigurationFile?) throws -> [String] {
        guard let parsed, let gateway = parsed.document["wake_gateway"] as? [String: Any], let section = gateway["topics"]
        else { return [] }
        let file = parsed.path
        guard let topics = section as? [String: Any] else {
            throw HeraldConfiguration.Invalid("\(file): wake_gateway.topics must be a map of topic names")
        }
        for (name, entry) in topics {
            guard WakeTopicName.isName(name) else {
                throw HeraldConfiguration.Invalid(
                    "\(file): wake_gateway topic '\(name.prefix(64))' must be namespace.Name (a lower-case first segment, then segments starting with a letter)"
                )
            }
            guard entry is [String: Any] else { throw HeraldConfiguration.Invalid("\(file): wake_gateway topic '\(name)' is not a map") }
        }
        return topics.keys.sorted()
    }

    static func topic(_ name: String, file: String, reader: ConfigReader) throws -> WakeGatewayTopic {
        func value(_ key: String) -> String? {
            let text = reader.string(forKey: ConfigKey(["wake_gateway", "topics", name, key]))?.trimmingCharacters(in: .whitespaces)
            return text?.isEmpty == false ? text : nil
        }
        func fail(_ message: String) -> HeraldConfiguration.Invalid {
            HeraldConfiguration.Invalid("\(file): wake_gateway.topics.\(name): \(message)")
        }
        func seconds(_ key: String, default fallback: Int) throws -> Int {
            guard let text = value(key) else { return fallback }
            guard let number = Int(text), (1...86_400).contains(number) else { throw fail("\(key) must be 1 to 86400 seconds") }
            return number
        }
        var topic = WakeGatewayTopic(name: name)
        if let urgency = value("urgency") {
            guard let parsed = WakeUrgency(rawValue: urgency) else { throw fail("urgency must be background, alert or time_sensitive") }
            topic.urgency = parsed
        }
        topic.deadlineSeconds = try seconds("deadline_secs", default: 60)
        topic.fallbackAfterSeconds = try seconds("fallback_after_secs", default: min(15, topic.deadlineSeconds - 1))
        if let alertable = value("alertable") {
            guard let flag = Bool(alertable.lowercased()) else { throw fail("alertable must be true or false") }
            topic.alertable = flag
        }
        switch (value("title"), value("body")) {
        case (let title?, let body?): topic.text = NotificationText(title: title, body: body)
        case (nil, nil): break
        default: throw fail("title and body go together")
        }
        topic.description = value("description") ?? ""
        if topic.alertable || topic.urgency != .background, topic.text == nil {
            throw fail("an alertable or visible topic needs a title and body")
        }
        if topic.alertable, topic.fallbackAfterSeconds >= topic.deadlineSeconds {
            throw fail("fallback_after_secs must be less than deadline_secs")
        }
        return topic
    }
}
