import Foundation
import HeraldStore
import HeraldWire
import PostgresNIO

extension PostgresStore: SessionStore {
    public func putSession(_ session: SessionWrite, now: Date) async throws -> Bool {
        let nowValue = now.timeIntervalSince1970
        // `xmax = 0` holds for a row this statement inserted, not for one it updated.
        // A write without a token keeps the record that a dead one was dropped, so the backend
        // still reads `dead` until the app sends a new token.
        let rows = try await rows(
            """
            INSERT INTO backend_session (user_id, session_id, platform, allow_notifications, push_token,
                                         seal_key, created_at, updated_at, app)
            VALUES (\(session.userID), \(session.sessionID), \(session.platform.rawValue), \(session.allowNotifications),
                    \(session.pushToken), \(session.sealKey?.base64), \(nowValue), \(nowValue), \(session.app))
            ON CONFLICT (user_id, session_id) DO UPDATE SET
                platform = excluded.platform,
                allow_notifications = excluded.allow_notifications,
                push_token = excluded.push_token,
                seal_key = excluded.seal_key,
                app = excluded.app,
                token_dropped_at = CASE WHEN excluded.push_token IS NULL THEN backend_session.token_dropped_at END,
                updated_at = excluded.updated_at
            RETURNING (xmax = 0)
            """
        )
        return try rows.first?.decode(Bool.self) ?? false
    }

    public func session(userID: String, sessionID: String) async throws -> BackendSession? {
        try await rows(
            PostgresQuery(
                unsafeSQL: Self.sessionSelect + " WHERE s.user_id = $1 AND s.session_id = $2",
                binds: Self.binds(userID, sessionID)
            )
        ).first.flatMap(Self.session(from:))
    }

    public func deleteSession(userID: String, sessionID: String) async throws -> Bool {
        try await !rows(
            "DELETE FROM backend_session WHERE user_id = \(userID) AND session_id = \(sessionID) RETURNING 1"
        ).isEmpty
    }

    public func sessions(userID: String) async throws -> SessionList {
        let sessions = try await rows(
            PostgresQuery(
                unsafeSQL: Self.sessionSelect + " WHERE s.user_id = $1 ORDER BY s.session_id",
                binds: Self.binds(userID)
            )
        ).compactMap(Self.session(from:))
        let dropped =
            try await rows("SELECT dropped_dead_tokens FROM backend_user WHERE user_id = \(userID)")
            .first?
            .decode(Int.self) ?? 0
        return SessionList(sessions: sessions, droppedDeadTokens: dropped)
    }

    public func pushTargets(userID: String, now: Date) async throws -> PushTargets {
        let nowValue = now.timeIntervalSince1970
        return try await transaction { connection, logger in
            // Locked, so two processes fanning out to the same user drop a dead token once.
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: Self.sessionSelect
                        + " WHERE s.user_id = $1 AND s.push_token IS NOT NULL ORDER BY s.session_id FOR UPDATE OF s",
                    binds: Self.binds(userID)
                ),
                logger: logger
            ).collect()
            let sessions = try rows.compactMap(Self.session(from:))
            let dead = sessions.filter { $0.tokenStatus == .dead }.map(\.sessionID)
            if !dead.isEmpty {
                try await connection.query(
                    """
                    UPDATE backend_session SET push_token = NULL, token_dropped_at = \(nowValue), updated_at = \(nowValue)
                    WHERE user_id = \(userID) AND session_id = ANY(\(dead))
                    """,
                    logger: logger
                )
                try await connection.query(
                    """
                    INSERT INTO backend_user (user_id, dropped_dead_tokens) VALUES (\(userID), \(dead.count))
                    ON CONFLICT (user_id) DO UPDATE SET
                        dropped_dead_tokens = backend_user.dropped_dead_tokens + excluded.dropped_dead_tokens
                    """,
                    logger: logger
                )
            }
            return PushTargets(
                sessions: sessions.filter { $0.tokenStatus == .active && $0.allowNotifications },
                droppedDead: dead.count
            )
        }
    }

    public func claimWelcome(userID: String, now: Date) async throws -> Bool {
        try await !rows(
            """
            INSERT INTO backend_user (user_id, welcome_sent_at) VALUES (\(userID), \(now.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET welcome_sent_at = excluded.welcome_sent_at
            WHERE backend_user.welcome_sent_at IS NULL
            RETURNING 1
            """
        ).isEmpty
    }

    public func releaseWelcome(userID: String) async throws {
        try await rows("UPDATE backend_user SET welcome_sent_at = NULL WHERE user_id = \(userID)")
    }

    /// Sessions with a `dead` flag: whether their current token is in `dead_token`.
    static let sessionSelect = """
        SELECT s.user_id, s.session_id, s.platform, s.allow_notifications, s.push_token, s.token_dropped_at,
               s.seal_key, s.created_at, s.updated_at, d.token IS NOT NULL AS dead, s.app
        FROM backend_session s
        LEFT JOIN dead_token d ON d.platform = s.platform AND d.token = s.push_token
        """

    static func session(from row: PostgresRow) throws -> BackendSession? {
        let (
            userID, sessionID, platform, allow, token, droppedAt, sealKey, createdAt, updatedAt, dead, app
        ) = try row.decode(
            (String, String, String, Bool, String?, Double?, String?, Double, Double, Bool, String).self
        )
        guard let platform = Platform(rawValue: platform) else { return nil }
        let status: TokenStatus
        if token != nil {
            status = dead ? .dead : .active
        } else {
            status = droppedAt != nil ? .dead : .none
        }
        return BackendSession(
            userID: userID, sessionID: sessionID, platform: platform, allowNotifications: allow,
            pushToken: token,
            tokenStatus: status, sealKey: sealKey.flatMap { try? SealPublicKey(base64: $0) }, app: app,
            createdAt: PostgresRow.date(createdAt), updatedAt: PostgresRow.date(updatedAt)
        )
    }
}
