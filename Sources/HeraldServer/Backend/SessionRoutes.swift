import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// `…/users/{user_id}/sessions`: the backend records each login's push token and whether the
/// user allows notifications, refreshes it, removes it at logout, and reads them back.
struct SessionRoutes: Sendable {
    let sessions: any SessionStore
    let providers: PushRouter
    let settings: ServerSettings
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.get(":user_id/sessions") { _, context in try await list(context: context) }
        router.put(":user_id/sessions/:session_id") { request, context in try await put(request, context: context) }
        router.patch(":user_id/sessions/:session_id") { request, context in try await patch(request, context: context) }
        router.delete(":user_id/sessions/:session_id") { _, context in try await delete(context: context) }
    }

    /// `PUT`: creates (201) or replaces (200) the session.
    func put(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        let sessionID = try backendID(.sessionID, in: context)
        var request = request
        let body = try await Edge.readJSONBody(SessionPutBody.self, from: &request)
        let write = try await checked(
            userID: userID, sessionID: sessionID, platform: Edge.parsePlatform(body.platform),
            allowNotifications: body.allowNotifications, pushToken: body.pushToken, subscription: body.subscription,
            sealKey: try body.sealKey.flatMap(PushSealing.parseUpdate),
            app: try Edge.checkApp(body.app, providers: providers)
        )
        let created = try await sessions.putSession(write, now: now())
        return try await answer(userID: userID, sessionID: sessionID, status: created ? .created : .ok)
    }

    /// `PATCH`: changes the fields sent (a refreshed token, notifications on or off).
    func patch(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        let sessionID = try backendID(.sessionID, in: context)
        var request = request
        let body = try await Edge.readJSONBody(SessionPatchBody.self, from: &request)
        guard let current = try await sessions.session(userID: userID, sessionID: sessionID) else {
            throw APIError(.sessionNotFound, "no session \(sessionID) for user \(userID); create it with PUT")
        }
        let platform = try body.platform.map(Edge.parsePlatform) ?? current.platform
        // A token or subscription sent replaces the one stored. None sent keeps it as it was
        // checked when stored, unless the platform changes: then it is checked against the new one.
        let sent = body.pushToken != nil || body.subscription != nil
        let keep = !sent && platform == current.platform
        let write = try await checked(
            userID: userID, sessionID: sessionID,
            platform: platform,
            allowNotifications: body.allowNotifications ?? current.allowNotifications,
            pushToken: sent ? body.pushToken : (keep ? nil : current.pushToken), subscription: body.subscription,
            stored: keep ? current.pushToken : nil,
            // Absent keeps the key; "" removes it.
            sealKey: try body.sealKey.map(PushSealing.parseUpdate) ?? current.sealKey,
            app: try body.app.map { try Edge.checkApp($0, providers: providers) } ?? current.app
        )
        _ = try await sessions.putSession(write, now: now())
        return try await answer(userID: userID, sessionID: sessionID, status: .ok)
    }

    /// `DELETE` at logout: 204 whether or not the session existed, so a retried logout succeeds.
    func delete(context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        let sessionID = try backendID(.sessionID, in: context)
        _ = try await sessions.deleteSession(userID: userID, sessionID: sessionID)
        return Response(status: .noContent)
    }

    /// `GET`: every session of the user with its token status.
    func list(context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        let list = try await sessions.sessions(userID: userID)
        return try JSONResponse.make(
            SessionListView(
                userID: userID,
                sessions: list.sessions.map(SessionView.init),
                droppedDeadTokens: list.droppedDeadTokens
            )
        )
    }

    // MARK: Helpers

    func answer(userID: String, sessionID: String, status: HTTPResponse.Status) async throws -> Response {
        guard let session = try await sessions.session(userID: userID, sessionID: sessionID) else {
            // Deleted by a concurrent logout between the write and this read.
            throw APIError(.sessionNotFound, "the session was removed meanwhile")
        }
        return try JSONResponse.make(SessionView(session), status: status)
    }

    /// The session to store, refused when notifications are on without a token, or when the
    /// token cannot work on its platform (checked now, not at the first event).
    ///
    /// - Parameter stored: The session's token as stored, when the request keeps it.
    func checked(
        userID: String, sessionID: String, platform: Platform, allowNotifications: Bool, pushToken: String?,
        subscription: WebPushSubscription?, stored: String? = nil, sealKey: SealPublicKey?, app: String
    ) async throws -> SessionWrite {
        let given = pushToken.flatMap { $0.isEmpty ? nil : $0 }
        var token = stored
        if given != nil || subscription != nil {
            token = try await Edge.pushAddress(
                platform: platform, pushToken: given, subscription: subscription, policy: settings.registrationWebPushPolicy)
        }
        if allowNotifications, token == nil {
            throw APIError(
                .pushTokenRequired,
                platform == .webpush
                    ? "subscription is required when allow_notifications is true"
                    : "push_token is required when allow_notifications is true"
            )
        }
        if let token {
            // A message every provider accepts, so only the platform and token are judged.
            let probe = PushMessage(kind: .alert, data: [:], alert: .init(title: "-", body: "-"))
            do throws(PushValidationError) {
                try providers.validate(probe, for: PushTarget(platform: platform, token: token, app: app))
            } catch {
                // Any refusal but a missing provider or app is the token's.
                switch error.code {
                case .platformNotConfigured, .unknownApp:
                    throw APIError(error)
                default:
                    throw APIError(
                        .invalidToken, "push_token is not a valid \(platform.rawValue) token: \(error.message)"
                    )
                }
            }
        }
        return SessionWrite(
            userID: userID, sessionID: sessionID, platform: platform,
            allowNotifications: allowNotifications, pushToken: token, sealKey: sealKey, app: app
        )
    }
}
