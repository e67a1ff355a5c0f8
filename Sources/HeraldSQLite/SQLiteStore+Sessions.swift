import Foundation
import GRDB
import HeraldStore
import HeraldWire

extension SQLiteStore: SessionStore {
    public func putSession(_ session: SessionWrite, now: Date) async throws -> Bool {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            let existed =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT EXISTS (SELECT 1 FROM backend_session WHERE user_id = ? AND session_id = ?)",
                    arguments: [session.userID, session.sessionID]
                ) ?? false
            // A write without a token keeps the record that a dead one was dropped, so the
            // backend still reads `dead` until the app sends a new token.
            try db.execute(
                sql: """
                    INSERT INTO backend_session (user_id, session_id, platform, allow_notifications, push_token,
                                                 seal_key, created_at, updated_at, app)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (user_id, session_id) DO UPDATE SET
                        platform = excluded.platform,
                        allow_notifications = excluded.allow_notifications,
                        push_token = excluded.push_token,
                        seal_key = excluded.seal_key,
                        app = excluded.app,
                        token_dropped_at = CASE WHEN excluded.push_token IS NULL
                                                THEN backend_session.token_dropped_at END,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    session.userID, session.sessionID, session.platform.rawValue, session.allowNotifications,
                    session.pushToken, session.sealKey?.base64, nowValue, nowValue, session.app,
                ]
            )
            return !existed
        }
    }

    public func session(userID: String, sessionID: String) async throws -> BackendSession? {
        try await database.read { db in
            try Row.fetchOne(
                db,
                sql: Self.sessionSelect + " WHERE s.user_id = ? AND s.session_id = ?",
                arguments: [userID, sessionID]
            ).flatMap(Self.session(from:))
        }
    }

    public func deleteSession(userID: String, sessionID: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM backend_session WHERE user_id = ? AND session_id = ?",
                arguments: [userID, sessionID]
            )
            return db.changesCount > 0
        }
    }

    public func sessions(userID: String) async throws -> SessionList {
        try await database.read { db in
            let sessions = try Row.fetchAll(
                db,
                sql: Self.sessionSelect + " WHERE s.user_id = ? ORDER BY s.session_id",
                arguments: [userID]
            ).compactMap(Self.session(from:))
            let dropped =
                try Int.fetchOne(
                    db,
                    sql: "SELECT dropped_dead_tokens FROM backend_user WHERE user_id = ?",
                    arguments: [userID]
                ) ?? 0
            return SessionList(sessions: sessions, droppedDeadTokens: dropped)
        }
    }

    public func pushTargets(userID: String, now: Date) async throws -> PushTargets {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            let sessions = try Row.fetchAll(
                db,
                sql: Self.sessionSelect + " WHERE s.user_id = ? AND s.push_token IS NOT NULL ORDER BY s.session_id",
                arguments: [userID]
            ).compactMap(Self.session(from:))
            let dead = sessions.filter { $0.tokenStatus == .dead }
            if !dead.isEmpty {
                let clear = try db.cachedStatement(
                    sql: """
                        UPDATE backend_session SET push_token = NULL, token_dropped_at = ?, updated_at = ?
                        WHERE user_id = ? AND session_id = ?
                        """
                )
                for session in dead {
                    try clear.execute(arguments: [nowValue, nowValue, userID, session.sessionID])
                }
                try db.execute(
                    sql: """
                        INSERT INTO backend_user (user_id, dropped_dead_tokens) VALUES (?, ?)
                        ON CONFLICT (user_id) DO UPDATE SET
                            dropped_dead_tokens = backend_user.dropped_dead_tokens + excluded.dropped_dead_tokens
                        """,
                    arguments: [userID, dead.count]
                )
            }
            return PushTargets(
                sessions: sessions.filter { $0.tokenStatus == .active && $0.allowNotifications },
                droppedDead: dead.count
            )
        }
    }

    public func claimWelcome(userID: String, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO backend_user (user_id, welcome_sent_at) VALUES (?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET welcome_sent_at = excluded.welcome_sent_at
                    WHERE backend_user.welcome_sent_at IS NULL
                    """,
                arguments: [userID, now.timeIntervalSince1970]
            )
            return db.changesCount > 0
        }
    }

    public func releaseWelcome(userID: String) async throws {
        try await database.write { db in
            try db.execute(sql: "UPDATE backend_user SET welcome_sent_at = NULL WHERE user_id = ?", arguments: [userID])
        }
    }

    /// Sessions with a `dead` flag: whether their current token is in `dead_token`.
    static let sessionSelect = """
        SELECT s.user_id, s.session_id, s.platform, s.allow_notifications, s.push_token, s.token_dropped_at,
               s.seal_key, s.created_at, s.updated_at, d.token IS NOT NULL AS dead, s.app
        FROM backend_session s
        LEFT JOIN dead_token d ON d.platform = s.platform AND d.token = s.push_token
        """

    static func session(from row: Row) -> BackendSession? {
        guard let platform = Platform(rawValue: row["platform"]) else { return nil }
        let token: String? = row["push_token"]
        let droppedAt: Double? = row["token_dropped_at"]
        let status: TokenStatus
        if token != nil {
            status = row["dead"] ? .dead : .active
        } else {
            status = droppedAt != nil ? .dead : .none
        }
        return BackendSession(
            userID: row["user_id"],
            sessionID: row["session_id"],
            platform: platform,
            allowNotifications: row["allow_notifications"],
            pushToken: token,
            tokenStatus: status,
            sealKey: (row["seal_key"] as String?).flatMap { try? SealPublicKey(base64: $0) },
            app: row["app"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"])
        )
    }
}
