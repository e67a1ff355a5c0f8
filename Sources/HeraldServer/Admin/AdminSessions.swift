import Foundation
import HeraldStore
import NIOConcurrencyHelpers

/// Dashboard log-ins: a random session id (the HttpOnly cookie) names the admin API key it was
/// opened with and the CSRF token every form of that session carries.
///
/// The key is checked again on every request, so revoking it ends its sessions at once. In
/// memory only: a restart logs everyone out, which is fine for an operator's page.
final class AdminSessions: Sendable {
    struct Session: Sendable {
        var apiKey: String
        var csrf: String
        var expiresAt: Date
    }

    static let lifetime: TimeInterval = 12 * 3600
    /// Sessions kept at most; the oldest go first. Opening one needs an admin key, so this only
    /// bounds what a careless script logging in in a loop can cost.
    static let capacity = 1_000

    private let sessions = NIOLockedValueBox([String: Session]())

    /// Opens a session for an admin key already checked; returns its id.
    func open(apiKey: String, now: Date) -> (id: String, session: Session) {
        let id = Secrets.random(bytes: 32)
        let session = Session(apiKey: apiKey, csrf: Secrets.random(bytes: 24), expiresAt: now.addingTimeInterval(Self.lifetime))
        sessions.withLockedValue { sessions in
            sessions = sessions.filter { $0.value.expiresAt > now }
            if sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                sessions[oldest.key] = nil
            }
            sessions[id] = session
        }
        return (id, session)
    }

    /// The live session with this id.
    func session(id: String, now: Date) -> Session? {
        sessions.withLockedValue { sessions in
            guard let session = sessions[id] else { return nil }
            guard session.expiresAt > now else {
                sessions[id] = nil
                return nil
            }
            return session
        }
    }

    func close(id: String) {
        sessions.withLockedValue { $0[id] = nil }
    }
}
