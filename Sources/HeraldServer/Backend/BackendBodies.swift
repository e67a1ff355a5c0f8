import Foundation
import HeraldStore
import HeraldWire

/// `PUT /api/v1/users/{user_id}/sessions/{session_id}`: what the backend's login handler sends.
struct SessionPutBody: Codable, Sendable {
    var allowNotifications: Bool
    var platform: String
    /// Required when `allow_notifications` is true (`subscription` instead for `webpush`).
    var pushToken: String?
    /// The Web Push subscription, for platform `webpush`.
    var subscription: WebPushSubscription?
    /// Base64 of the app's X25519 public key: the session's pushes are sealed to it. A PUT
    /// replaces the session, so absent means none.
    var sealKey: String?
    /// The configured app whose credentials push to the token; absent: `default`.
    var app: String?

    enum CodingKeys: String, CodingKey {
        case allowNotifications = "allow_notifications"
        case platform
        case pushToken = "push_token"
        case subscription
        case sealKey = "seal_key"
        case app
    }
}

/// `PATCH …/sessions/{session_id}`: a token refresh (`onNewToken`), a settings change, or both.
/// Absent fields keep their value.
struct SessionPatchBody: Codable, Sendable {
    var allowNotifications: Bool?
    var platform: String?
    var pushToken: String?
    var subscription: WebPushSubscription?
    /// A new seal key; `""` removes it.
    var sealKey: String?
    var app: String?

    /// The PUT's fields, by the same names.
    typealias CodingKeys = SessionPutBody.CodingKeys
}

/// One session as the backend reads it back.
struct SessionView: Codable, Sendable {
    var sessionID: String
    var platform: Platform
    var allowNotifications: Bool
    var pushToken: String?
    /// A `webpush` session's subscription (its `push_token` is absent).
    var subscription: WebPushSubscription?
    var tokenStatus: TokenStatus
    /// The id of the key pushes are sealed to; absent when they are not.
    var sealKeyID: String?
    var app: String
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case sessionID = "session_id"
        case platform
        case allowNotifications = "allow_notifications"
        case pushToken = "push_token"
        case subscription
        case tokenStatus = "token_status"
        case sealKeyID = "seal_kid"
        case app
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(_ session: BackendSession) {
        sessionID = session.sessionID
        platform = session.platform
        allowNotifications = session.allowNotifications
        if session.platform == .webpush {
            subscription = session.pushToken.flatMap(WebPushSubscription.init(storageToken:))
        } else {
            pushToken = session.pushToken
        }
        tokenStatus = session.tokenStatus
        sealKeyID = session.sealKey?.keyID
        app = session.app
        createdAt = session.createdAt.formatted(.iso8601)
        updatedAt = session.updatedAt.formatted(.iso8601)
    }
}

/// `GET /api/v1/users/{user_id}/sessions`.
struct SessionListView: Codable, Sendable {
    var userID: String
    var sessions: [SessionView]
    /// Dead tokens removed from this user's sessions so far.
    var droppedDeadTokens: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case sessions
        case droppedDeadTokens = "dropped_dead_tokens"
    }
}

/// The answer to an event: one job per targeted session.
struct EventResult: Codable, Sendable {
    var targeted: Int
    var jobIDs: [String]
    /// Sessions whose dead token was removed instead of being pushed to.
    var skippedDead: Int

    enum CodingKeys: String, CodingKey {
        case targeted
        case jobIDs = "job_ids"
        case skippedDead = "skipped_dead"
    }
}

/// `POST /api/v1/users/{user_id}/welcome`, all optional: the onboarding text and Android look.
struct WelcomeBody: Codable, Sendable {
    var notification: NotificationText?
    var channelID: String?
    var color: String?
    var icon: String?

    enum CodingKeys: String, CodingKey {
        case notification, color, icon
        case channelID = "channel_id"
    }
}

/// The answer to a welcome call: whether it was sent now, and if not, why.
struct WelcomeResult: Codable, Sendable {
    var sent: Bool
    /// `already_sent` or `no_active_sessions` when nothing was sent.
    var reason: String?
    var targeted: Int
    var jobIDs: [String]
    var skippedDead: Int

    enum CodingKeys: String, CodingKey {
        case sent, reason, targeted
        case jobIDs = "job_ids"
        case skippedDead = "skipped_dead"
    }
}
