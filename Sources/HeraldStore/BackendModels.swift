import Foundation
import HeraldWire

/// What a key may call. An open set, so later features add theirs; `admin` allows everything.
public struct APIScope: RawRepresentable, Codable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public static func < (lhs: APIScope, rhs: APIScope) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `PUT`/`PATCH`/`DELETE`/`GET` of user sessions.
    public static let sessions: APIScope = "sessions"
    /// Events and the welcome push.
    public static let events: APIScope = "events"
    /// `POST /wake` and `GET /forwarding_hint`: an LSP waking wallets and asking whether to retry.
    public static let wake: APIScope = "wake"
    /// `POST /api/v1/devices` when the operator runs `registration: key`: the app's backend
    /// registers devices, so nobody else can point an alias at a token of their choosing.
    public static let devices: APIScope = "devices"
    /// Every scope, present and future.
    public static let admin: APIScope = "admin"

    /// The scopes `herald keys create` accepts.
    public static let known: [APIScope] = [.sessions, .events, .wake, .devices, .admin]

    /// Parses a comma-separated list (`sessions,events`), refusing empty lists and unknown names.
    public static func parseList(_ text: String) throws(UnknownAPIScope) -> Set<APIScope> {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var scopes: Set<APIScope> = []
        for name in names where !name.isEmpty {
            let scope = APIScope(rawValue: name)
            guard known.contains(scope) else { throw UnknownAPIScope(name: name) }
            scopes.insert(scope)
        }
        guard !scopes.isEmpty else { throw UnknownAPIScope(name: "") }
        return scopes
    }
}

/// A scope name `herald keys create` does not know (or an empty list).
public struct UnknownAPIScope: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var description: String {
        let known = APIScope.known.map(\.rawValue).joined(separator: ", ")
        return name.isEmpty ? "give at least one scope (\(known))" : "unknown scope '\(name)'; known scopes: \(known)"
    }
}

/// A stored API key (never its secret).
public struct APIKey: Sendable, Hashable {
    public var id: String
    public var name: String
    public var scopes: Set<APIScope>
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, name: String, scopes: Set<APIScope>, createdAt: Date, revokedAt: Date?) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public var isRevoked: Bool { revokedAt != nil }

    /// Whether the key may call an endpoint needing `scope`.
    public func allows(_ scope: APIScope) -> Bool {
        scopes.contains(scope) || scopes.contains(.admin)
    }
}

/// A new key and its secret, returned once.
public struct CreatedAPIKey: Sendable, Hashable {
    public var key: APIKey
    /// `hk_` and 256 random bits in base64url: recognisable in a leak scan, unguessable.
    public var secret: String

    /// What every API key starts with, so a leaked one is recognisable in logs and scans.
    public static let secretPrefix = "hk_"

    /// A fresh key: an id, and a secret of 32 random bytes (256 bits, so a hash lookup needs no slow KDF).
    public static func make(name: String, scopes: Set<APIScope>, now: Date) -> CreatedAPIKey {
        CreatedAPIKey(
            key: APIKey(id: "key_" + Secrets.random(bytes: 9), name: name, scopes: scopes, createdAt: now, revokedAt: nil),
            secret: secretPrefix + Secrets.random(bytes: 32)
        )
    }

    /// Whether a presented secret could be a key at all, before any lookup.
    public static func isPlausible(secret: String) -> Bool {
        secret.hasPrefix(secretPrefix) && secret.utf8.count <= 256
    }
}

extension Set where Element == APIScope {
    /// As stored: sorted names, comma-separated.
    public var storedForm: String { map(\.rawValue).sorted().joined(separator: ",") }

    public init(storedForm text: String) {
        self.init(text.split(separator: ",").map { APIScope(rawValue: String($0)) })
    }
}

/// A session as the backend writes it.
public struct SessionWrite: Sendable, Hashable {
    public var userID: String
    public var sessionID: String
    public var platform: Platform
    public var allowNotifications: Bool
    public var pushToken: String?
    /// The key the session's pushes are sealed to; nil for clear pushes.
    public var sealKey: SealPublicKey?
    /// The app whose credentials push to the session's token.
    public var app: String

    public init(
        userID: String, sessionID: String, platform: Platform, allowNotifications: Bool, pushToken: String?,
        sealKey: SealPublicKey? = nil, app: String = Device.defaultApp
    ) {
        self.app = app
        self.userID = userID
        self.sessionID = sessionID
        self.platform = platform
        self.allowNotifications = allowNotifications
        self.pushToken = pushToken
        self.sealKey = sealKey
    }
}

/// Whether a session's token can still be pushed to.
public enum TokenStatus: String, Codable, Sendable, Hashable {
    /// A token no push service has refused.
    case active
    /// The push service declared the token gone; it is (or will be at the next event) removed.
    case dead
    /// The session has no token.
    case none
}

/// A stored session.
public struct BackendSession: Sendable, Hashable {
    public var userID: String
    public var sessionID: String
    public var platform: Platform
    public var allowNotifications: Bool
    public var pushToken: String?
    public var tokenStatus: TokenStatus
    /// The key the session's pushes are sealed to, so a fan-out has it without another read.
    public var sealKey: SealPublicKey?
    public var app: String
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        userID: String, sessionID: String, platform: Platform, allowNotifications: Bool, pushToken: String?,
        tokenStatus: TokenStatus, sealKey: SealPublicKey? = nil, app: String = Device.defaultApp, createdAt: Date,
        updatedAt: Date
    ) {
        self.sealKey = sealKey
        self.app = app
        self.userID = userID
        self.sessionID = sessionID
        self.platform = platform
        self.allowNotifications = allowNotifications
        self.pushToken = pushToken
        self.tokenStatus = tokenStatus
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A user's sessions.
public struct SessionList: Sendable, Hashable {
    public var sessions: [BackendSession]
    /// Dead tokens removed from this user's sessions so far.
    public var droppedDeadTokens: Int

    public init(sessions: [BackendSession], droppedDeadTokens: Int) {
        self.sessions = sessions
        self.droppedDeadTokens = droppedDeadTokens
    }
}

/// Where one event goes.
public struct PushTargets: Sendable, Hashable {
    /// Sessions with notifications on and a live token, ordered by session id.
    public var sessions: [BackendSession]
    /// Sessions whose dead token was removed by this call.
    public var droppedDead: Int

    public init(sessions: [BackendSession], droppedDead: Int) {
        self.sessions = sessions
        self.droppedDead = droppedDead
    }
}
