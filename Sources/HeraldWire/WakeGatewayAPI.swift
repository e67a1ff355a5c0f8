import Foundation

/// How a topic's wakes reach the phone.
public enum WakeUrgency: String, Codable, Sendable, Hashable, CaseIterable {
    /// A silent push (APNs `background`, priority 5) the app may or may not be woken for.
    case background
    /// A visible alert (`interruption-level: active`).
    case alert
    /// A visible alert that breaks through Focus (`interruption-level: time-sensitive`).
    case timeSensitive = "time_sensitive"

    /// APNs `interruption-level` of its alerts; nil for background.
    public var interruptionLevel: String? {
        switch self {
        case .background: nil
        case .alert: "active"
        case .timeSensitive: "time-sensitive"
        }
    }
}

/// `GET /v1/info`.
public struct WakeServerInfo: Codable, Sendable, Hashable {
    public var audience: String
    public var serverTime: Int64
    public var version: String
    public init(audience: String, serverTime: Int64, version: String) {
        self.audience = audience
        self.serverTime = serverTime
        self.version = version
    }
    enum CodingKeys: String, CodingKey {
        case audience
        case serverTime = "server_time"
        case version
    }
}

/// One topic of `GET /v1/topics`.
public struct WakeTopicInfo: Codable, Sendable, Hashable {
    public struct Display: Codable, Sendable, Hashable {
        public var title: String
        public var body: String
        public init(title: String, body: String) {
            self.title = title
            self.body = body
        }
    }
    public var name: String
    public var description: String
    public var urgency: WakeUrgency
    public var deadlineSecs: Int
    /// Peers (not services) send this topic, through grants. Herald has no peer topics.
    public var peer: Bool
    public var alertable: Bool
    public var display: Display?

    public init(name: String, description: String, urgency: WakeUrgency, deadlineSecs: Int, peer: Bool = false, alertable: Bool, display: Display?) {
        self.name = name
        self.description = description
        self.urgency = urgency
        self.deadlineSecs = deadlineSecs
        self.peer = peer
        self.alertable = alertable
        self.display = display
    }
    enum CodingKeys: String, CodingKey {
        case name, description, urgency
        case deadlineSecs = "deadline_secs"
        case peer, alertable, display
    }
}

public struct WakeTopicList: Codable, Sendable, Hashable {
    public var topics: [WakeTopicInfo]
    public init(topics: [WakeTopicInfo]) { self.topics = topics }
}

/// The answer to `POST /v1/devices`.
public struct WakeRegistrationAnswer: Codable, Sendable, Hashable {
    public var deviceID: String
    public var identities: [String]
    /// Stored: the known names and every pattern.
    public var topics: [String]
    /// Exact names the gateway does not know; not stored.
    public var unknownTopics: [String]
    public var serverTime: Int64
    public init(deviceID: String, identities: [String], topics: [String], unknownTopics: [String], serverTime: Int64) {
        self.deviceID = deviceID
        self.identities = identities
        self.topics = topics
        self.unknownTopics = unknownTopics
        self.serverTime = serverTime
    }
    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case identities, topics
        case unknownTopics = "unknown_topics"
        case serverTime = "server_time"
    }
}

/// `PUT /v1/devices/self/topics`, and its answer with `unknown_topics`.
public struct WakeTopicsBody: Codable, Sendable, Hashable {
    public var topics: [String]
    public var unknownTopics: [String]?
    public init(topics: [String], unknownTopics: [String]? = nil) {
        self.topics = topics
        self.unknownTopics = unknownTopics
    }
    enum CodingKeys: String, CodingKey {
        case topics
        case unknownTopics = "unknown_topics"
    }
}

/// `PUT /v1/presence`.
public struct WakePresenceBody: Codable, Sendable, Hashable {
    public var ttlSecs: Int
    public init(ttlSecs: Int) { self.ttlSecs = ttlSecs }
    enum CodingKeys: String, CodingKey { case ttlSecs = "ttl_secs" }
    /// The TTL the gateway grants: 15 to 300 seconds.
    public static let ttlRange = 15...300
}

public struct WakePresenceAnswer: Codable, Sendable, Hashable {
    public var expiresAt: Int64
    public init(expiresAt: Int64) { self.expiresAt = expiresAt }
    enum CodingKeys: String, CodingKey { case expiresAt = "expires_at" }
}

/// `POST /v1/acks`.
public struct WakeAck: Codable, Sendable, Hashable {
    public var id: String
    public var outcome: WakeAckOutcome
    public init(id: String, outcome: WakeAckOutcome) {
        self.id = id
        self.outcome = outcome
    }
}

/// A producer's wake of an identity on a topic (`POST /api/v1/wake` with an `identity`).
public struct IdentityWakeRequest: Codable, Sendable, Hashable {
    public var identity: String
    public var topic: String
    /// Any JSON; sealed into the wake as it is (compact, keys sorted).
    public var payload: JSONValue?
    /// Wakes with the same key replace each other on the phone (hashed before any push
    /// service sees it).
    public var collapseKey: String?
    public init(identity: String, topic: String, payload: JSONValue? = nil, collapseKey: String? = nil) {
        self.identity = identity
        self.topic = topic
        self.payload = payload
        self.collapseKey = collapseKey
    }
    enum CodingKeys: String, CodingKey {
        case identity, topic, payload
        case collapseKey = "collapse_key"
    }
}

public struct IdentityWakeAnswer: Codable, Sendable, Hashable {
    public var wakeID: String
    /// Devices that hold the identity, subscribe to the topic and may be reached: `pushed` plus `present`.
    public var devices: Int
    /// Devices sent a push.
    public var pushed: Int
    /// Devices connected now, told over their stream instead of a push.
    public var present: Int
    /// Devices holding the identity and the topic that were left out: not confirmed yet, a dead
    /// token, or over their push allowance.
    public var skipped: Int
    public init(wakeID: String, devices: Int, pushed: Int, present: Int, skipped: Int = 0) {
        self.wakeID = wakeID
        self.devices = devices
        self.pushed = pushed
        self.present = present
        self.skipped = skipped
    }
    enum CodingKeys: String, CodingKey {
        case wakeID = "wake_id"
        case devices, pushed, present, skipped
    }
}

/// `GET /api/v1/wake/{wake_id}`: what the producer asked for and what became of it.
public struct WakeStatus: Codable, Sendable, Hashable {
    public struct Device: Codable, Sendable, Hashable {
        public enum Fallback: String, Codable, Sendable, Hashable {
            /// The topic has no fallback, or the device was present.
            case none
            /// Due, not sent yet.
            case pending
            /// A `handled` ack cancelled it.
            case cancelled
            case sent
            /// It could not be delivered.
            case failed
        }
        public var deviceID: String
        /// The wake's push reached the push service.
        public var pushed: Bool
        /// The device was present: nothing was pushed.
        public var present: Bool
        /// The device's ack, if any.
        public var outcome: WakeAckOutcome?
        public var fallback: Fallback
        public init(deviceID: String, pushed: Bool, present: Bool, outcome: WakeAckOutcome?, fallback: Fallback) {
            self.deviceID = deviceID
            self.pushed = pushed
            self.present = present
            self.outcome = outcome
            self.fallback = fallback
        }
        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id"
            case pushed, present, outcome, fallback
        }
    }
    public var wakeID: String
    public var identity: String
    public var topic: String
    /// Unix seconds.
    public var deadline: Int64
    public var devices: [Device]
    public init(wakeID: String, identity: String, topic: String, deadline: Int64, devices: [Device]) {
        self.wakeID = wakeID
        self.identity = identity
        self.topic = topic
        self.deadline = deadline
        self.devices = devices
    }
    enum CodingKeys: String, CodingKey {
        case wakeID = "wake_id"
        case identity, topic, deadline, devices
    }
}
