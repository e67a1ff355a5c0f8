import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// `POST /api/v1/notify`: the Breez-compatible webhook that swap services, LNURL services and
/// LSPs call. Acknowledged with the job id only after the job is committed.
struct WebhookRoutes: Sendable {
    let intake: OutboxIntake
    let devices: any DeviceStore
    let providers: PushRouter
    let metrics: HeraldMetrics
    let settings: ServerSettings
    let relay: ReplyRelay
    let now: @Sendable () -> Date

    static let maxBodyBytes = 64 * 1024
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("notify") { request, context in try await notify(request, context: context) }
    }

    func notify(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let query = request.uri.queryParameters
        let target = try await resolveTarget(query)
        let webhook = try await decodeBody(&request)
        let appData = query.get("app_data")
        if ReplyRelay.holdsAnswer(for: webhook) {
            // Held until the device answers on the reply URL Herald adds; a retry asks the
            // device again, so no idempotency key.
            switch try await ask(webhook, target: target, appData: appData) {
            case .answered(let answer): return answer.response()
            case .timedOut: throw Self.replyTimeout(settings)
            case .tokenDead: throw Self.tokenUnregistered
            }
        }
        try webhook.validate()
        let result = try await enqueue(
            webhook, target: target, appData: appData, idempotencyKey: try idempotencyKey(request.headers, target: target)
        )
        // Job ids are UUIDs: no escaping needed, and no encoder on the hot path.
        var response = Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"id":""# + result.id + #""}"#))
        )
        if result.duplicate { response.headers[Self.replayed] = "true" }
        return response
    }

    /// Validates the push for its provider and commits its job.
    func enqueue(_ webhook: WebhookRequest, target: PushTarget, appData: String?, idempotencyKey: String?) async throws
        -> EnqueueResult
    {
        let pushData = try webhook.pushData(appData: appData)
        let expiresAt = now().addingTimeInterval(settings.jobTTL.timeInterval)
        let message = PushMessage.wake(pushData, collapseID: collapseID(for: webhook), expiresAt: expiresAt)
        do throws(PushValidationError) {
            try providers.validate(message, for: target)
        } catch {
            let status: HTTPResponse.Status = error.code == "platform_not_configured" ? .badRequest : .unprocessableContent
            throw APIError(status, error.code, error.message)
        }

        let job = NewJob(
            platform: target.platform,
            token: target.token,
            notificationType: pushData.notificationType.rawValue,
            payload: message.storedJSON(),
            idempotencyKey: idempotencyKey,
            expiresAt: expiresAt
        )
        let result: EnqueueResult
        do {
            result = try await intake.submit(job, message: message)
        } catch is OutboxIntake.Unavailable {
            throw APIError(.serviceUnavailable, "shutting_down", "the server is shutting down; retry shortly")
        } catch {
            throw APIError(.serviceUnavailable, "store_unavailable", "the event could not be stored; retry")
        }
        if !result.duplicate { metrics.received(type: pushData.notificationType.rawValue) }
        return result
    }

    /// Finds the push token behind the `token` parameter: a registered alias, or (when the
    /// operator allows it) a raw push token, as Breez-style integrations send.
    func resolveTarget(_ query: Parameters) async throws -> PushTarget {
        guard let token = query.get("token"), !token.isEmpty else {
            throw APIError.badRequest("missing_token", "the query parameter 'token' is required")
        }
        guard token.utf8.count <= 4096 else {
            throw APIError.badRequest("invalid_token", "the token is longer than 4096 bytes")
        }
        let platformParameter = query.get("platform")
        var platform: Platform?
        if let platformParameter {
            guard let parsed = Platform(rawValue: platformParameter.lowercased()) else {
                throw APIError.badRequest(
                    "unknown_platform",
                    "platform must be 'ios' or 'android', not '\(platformParameter.prefix(32))'"
                )
            }
            platform = parsed
        }
        let resolution = try await devices.resolveWebhookToken(token, rawPlatform: platform)
        let target: PushTarget
        if let device = resolution.device {
            target = PushTarget(platform: device.platform, token: device.token)
        } else if settings.acceptRawTokens {
            guard let platform else {
                throw APIError.badRequest("missing_platform", "the query parameter 'platform' is required")
            }
            target = PushTarget(platform: platform, token: token)
        } else {
            throw APIError(.notFound, "unknown_token", "no device is registered under this token")
        }
        if resolution.isDead { throw Self.tokenUnregistered }
        return target
    }

    func decodeBody(_ request: inout Request) async throws -> WebhookRequest {
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: Self.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "body_too_large", "the body is over \(Self.maxBodyBytes) bytes")
        }
        guard body.readableBytes > 0 else {
            throw APIError.badRequest("invalid_json", "the body is empty; expected a JSON object")
        }
        let parsed = body.withUnsafeReadableBytes { bytes in
            Result { () throws(WebhookBodyError) in try WebhookRequest(parsing: bytes) }
        }
        switch parsed {
        case .success(let webhook):
            // Passed on as sent, such a number could crash a device decoding it with JSONDecoder.
            guard !JSONValue.object(webhook.data).containsUnsafeNumber else {
                throw APIError.badRequest(
                    "invalid_json", "a number in data of 2^53 or more must be a plain integer that fits 64 bits"
                )
            }
            return webhook
        case .failure(.invalidJSON(let reason)):
            throw APIError.badRequest("invalid_json", "the body is not valid JSON: \(reason)")
        case .failure(.notAnObject):
            throw APIError.badRequest("invalid_json", "the body is not a JSON object")
        case .failure(.unknownShape(let reason)):
            throw APIError.badRequest(
                "unknown_body_shape",
                "expected {\"event\": …, \"data\": {…}} or {\"template\": …, \"data\": {…}}: \(reason)"
            )
        }
    }

    /// Swap updates for one swap replace each other on a device that was offline: only the
    /// latest status matters. Request/response events must each arrive, so they never collapse.
    func collapseID(for webhook: WebhookRequest) -> String? {
        guard webhook.notificationType == .swapUpdated, let id = webhook.data["id"]?.stringValue else { return nil }
        let collapse = "swap:" + id
        return collapse.utf8.count <= 64 ? collapse : nil
    }

    func idempotencyKey(_ headers: HTTPFields, target: PushTarget) throws -> String? {
        guard let key = headers[Self.idempotencyKey] else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw APIError.badRequest("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 bytes")
        }
        // Scoped to the target so one caller's key never matches another device's event.
        return "\(target.platform.rawValue):\(target.token):\(key)"
    }
}
