import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// `POST …/users/{user_id}/events` and `…/welcome`: a backend's event pushed to every live
/// session of the user, in the structure the backend's apps expect
/// (``message(data:text:channelID:color:icon:)``).
struct BackendEventRoutes: Sendable {
    let fanOut: BackendFanOut
    let sessions: any SessionStore
    let now: @Sendable () -> Date

    /// The onboarding text when the backend sends none.
    static let welcomeText = NotificationText(
        title: "Welcome! 🚀",
        body: "Your onboarding is complete. Start exploring now."
    )

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post(":user_id/events") { request, context in try await event(request, context: context) }
        router.post(":user_id/welcome") { request, context in try await welcome(request, context: context) }
    }

    func event(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        let idempotencyPrefix = try Edge.idempotencyKey(request.headers, scope: "backend-event:\(userID)")
        var request = request
        let event = try await Edge.readJSONBody(BackendEventRequest.self, from: &request)
        let data: [String: String]
        do throws(BackendEventError) {
            data = try event.pushData()
        } catch {
            throw APIError(.invalidData, error.message)
        }
        let message = Self.message(
            data: data, text: event.notification, channelID: event.channelID, color: event.color, icon: event.icon
        )
        let result = try await fanOut.send(
            message,
            userID: userID,
            idempotencyPrefix: idempotencyPrefix,
            idempotencyFingerprint: try idempotencyPrefix.map { _ in EnqueueResult.fingerprint(of: try WireJSON.encode(event)) },
            type: "backend_event"
        )
        if result.keyReused { throw APIError.idempotencyKeyReused }
        var response = try JSONResponse.make(
            EventResult(targeted: result.jobIDs.count, jobIDs: result.jobIDs, skippedDead: result.droppedDead)
        )
        if result.replayed { response.headers[Edge.replayed] = "true" }
        return response
    }

    /// Sends the onboarding push once per user. The claim is recorded before sending so two
    /// concurrent calls cannot both send; it is given back when no session could receive it.
    func welcome(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let userID = try backendID(.userID, in: context)
        var request = request
        let body = try await Edge.readOptionalJSONBody(WelcomeBody.self, from: &request) ?? WelcomeBody()
        let text = body.notification ?? Self.welcomeText
        guard !text.title.isEmpty else {
            throw APIError(.invalidData, "notification.title must not be empty")
        }
        guard try await sessions.claimWelcome(userID: userID, now: now()) else {
            return try JSONResponse.make(
                WelcomeResult(sent: false, reason: "already_sent", targeted: 0, jobIDs: [], skippedDead: 0)
            )
        }
        let message = Self.message(
            data: ["action": BackendAction.none.rawValue, "campaign_id": "", "campaign_name": ""],
            text: text, channelID: body.channelID, color: body.color, icon: body.icon
        )
        let result: BackendFanOut.Result
        do {
            result = try await fanOut.send(
                message, userID: userID, idempotencyPrefix: "backend-welcome:\(userID)", type: "backend_welcome"
            )
        } catch {
            try? await sessions.releaseWelcome(userID: userID)
            throw error
        }
        if result.jobIDs.isEmpty {
            try await sessions.releaseWelcome(userID: userID)
            return try JSONResponse.make(
                WelcomeResult(
                    sent: false, reason: "no_active_sessions", targeted: 0, jobIDs: [], skippedDead: result.droppedDead
                )
            )
        }
        return try JSONResponse.make(
            WelcomeResult(
                sent: true, reason: nil, targeted: result.jobIDs.count, jobIDs: result.jobIDs,
                skippedDead: result.droppedDead
            )
        )
    }

    /// The structure a wallet backend's apps expect: `notification`, string `data`, Android
    /// channel/sound/colour/icon at HIGH priority, and `aps` with sound, badge 1 and
    /// `mutable-content: 1`.
    static func message(
        data: [String: String], text: NotificationText, channelID: String?, color: String?, icon: String?
    ) -> PushMessage {
        PushMessage(
            kind: .alert,
            data: data,
            alert: .init(title: text.title, body: text.body, image: text.image),
            sound: "default",
            badge: 1,
            android: .init(channelID: channelID ?? "default", sound: "default", color: color, icon: icon)
        )
    }
}
