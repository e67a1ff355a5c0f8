import Foundation
import HeraldWire

/// API keys of wallet backends: the secret is shown once, only its SHA-256 is kept.
public protocol APIKeyStore: Sendable {
    /// Creates a key; the returned secret exists nowhere else.
    func createAPIKey(name: String, scopes: Set<APIScope>, now: Date) async throws -> CreatedAPIKey
    /// The key a presented secret opens, revoked or not; nil for an unknown secret.
    func apiKey(secret: String) async throws -> APIKey?
    /// Every key, oldest first, without secrets.
    func apiKeys() async throws -> [APIKey]
    /// Revokes a key; false when no such key exists. Revoking twice keeps the first moment.
    func revokeAPIKey(id: String, now: Date) async throws -> Bool
}

/// Sessions of a wallet backend's users: where each event is pushed.
public protocol SessionStore: Sendable {
    /// Creates or replaces a session; true when it was created.
    func putSession(_ session: SessionWrite, now: Date) async throws -> Bool
    func session(userID: String, sessionID: String) async throws -> BackendSession?
    /// Removes a session (logout); false when there was none.
    func deleteSession(userID: String, sessionID: String) async throws -> Bool
    /// The user's sessions with their token status, and how many dead tokens were dropped.
    func sessions(userID: String) async throws -> SessionList
    /// The sessions an event goes to: notifications on and a live token. Sessions whose token
    /// a push service declared dead lose the token here, in the same transaction, and are counted.
    func pushTargets(userID: String, now: Date) async throws -> PushTargets
    /// Claims the user's one welcome push; false when it was claimed before.
    func claimWelcome(userID: String, now: Date) async throws -> Bool
    /// Gives the claim back (nothing could be sent), so a later call may send it.
    func releaseWelcome(userID: String) async throws
}
