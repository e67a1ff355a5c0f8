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
    let delivery: PushDelivery
    let devices: any DeviceStore
    let providers: PushRouter
    let settings: ServerSettings
    /// LSPS5 notifications, the third body shape.
    let lsps5: LSPS5Intake
    /// Swaps' Live Activities, moved by the `swap.update` events to a registered iPhone.
    let activities: SwapActivities

    static let maxBodyBytes = 64 * 1024

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("notify") { request, context in try await notify(request, context: context) }
    }

    func notify(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let query = request.uri.queryParameters
        if LSPS5Intake.isLSPS5(request.headers) {
            return try await notifyLSPS5(&request, query: query)
        }
        var (recipient, device) = try await resolveTarget(query)
        if !recipient.registered { device = nil }
        let (webhook, body) = try await decodeBody(&request)
        let appData = query.get("app_data")
        if ReplyRelay.holdsAnswer(for: webhook) {
            // Held until the device answers on the reply URL Herald adds.
            let rawTokenClient = recipient.registered ? nil : context.clientAddress
            switch try await delivery.ask(webhook, to: recipient, appData: appData, rawTokenClient: rawTokenClient) {
            case .answered(let answer): return answer.response()
            case .timedOut: throw APIError.replyTimeout(settings)
            case .shuttingDown: throw APIError.shuttingDown
            case .tokenDead: throw APIError.tokenUnregistered
            }
        }
        try webhook.validate()
        let target = recipient.target
        recipient.idempotencyKey = try Edge.idempotencyKey(request.headers, scope: "\(target.destination.rawValue):\(target.token)")
        if recipient.idempotencyKey != nil { recipient.idempotencyFingerprint = Self.fingerprint(body, appData: appData) }
        let result = try await delivery.submit(webhook, to: recipient, appData: appData)
        // Whoever knows a token could otherwise plant a job under the key the real service will
        // use, and the real call would be answered with it.
        if result.keyReused { throw APIError.idempotencyKeyReused }
        // A retry already moved the swap's activity, if it has one.
        if let device, !result.duplicate, webhook.notificationType == .swapUpdated {
            await activities.swapUpdated(webhook, device: device)
        }
        // Job ids are UUIDs: no escaping needed, and no encoder on the hot path.
        var response = Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"id":""# + result.id + #""}"#))
        )
        if result.duplicate { response.headers[Edge.replayed] = "true" }
        return response
    }

    /// An LSPS5 notification: only on a registered device's URL, since the checks need the
    /// device (its LSP node id, its presence) and not just a push token.
    func notifyLSPS5(_ request: inout Request, query: Parameters) async throws -> Response {
        guard let token = query.get("token"), !token.isEmpty else {
            throw APIError(.missingToken, "the query parameter 'token' is required")
        }
        try Edge.checkPushToken(token, field: "token")
        let resolution = try await devices.resolveWebhookToken(token, rawPlatform: nil)
        if resolution.isDeletedAlias { throw APIError.deviceDeleted }
        guard let device = resolution.device else {
            throw APIError(.unknownToken, "LSPS5 notifications are taken only on a registered device's webhook URL")
        }
        _ = try await delivery.directory.recipient(device, isDead: resolution.isDead)
        let body = try await Edge.readRequiredBody(&request, limit: Self.maxBodyBytes)
        return try await lsps5.receive(body: Array(buffer: body), headers: request.headers, device: device)
    }

    /// Finds the push target behind the `token` parameter through the directory: a registered
    /// alias (with its seal key), or a raw push token where the operator allows one.
    func resolveTarget(_ query: Parameters) async throws -> (PushDelivery.Recipient, Device?) {
        guard let given = query.get("token"), !given.isEmpty else {
            throw APIError(.missingToken, "the query parameter 'token' is required")
        }
        try Edge.checkPushToken(given, field: "token")
        let platform = try query.get("platform").map(Edge.parsePlatform)
        return try await delivery.directory.webhookRecipient(token: given, platform: platform, app: query.get("app"))
    }

    /// What an idempotency key is bound to: the body as sent and `app_data`.
    static func fingerprint(_ body: ByteBuffer, appData: String?) -> String {
        EnqueueResult.fingerprint(of: Array(buffer: body) + [0] + Array((appData ?? "").utf8))
    }

    /// Parsed by ``WebhookRequest``'s own reader, not `JSONDecoder`: `data` passes through as sent.
    /// The body comes back too, for the idempotency fingerprint.
    func decodeBody(_ request: inout Request) async throws -> (WebhookRequest, ByteBuffer) {
        let body = try await Edge.readRequiredBody(&request, limit: Self.maxBodyBytes)
        let parsed = body.withUnsafeReadableBytes { bytes in
            Result { () throws(WebhookBodyError) in try WebhookRequest(parsing: bytes) }
        }
        switch parsed {
        case .success(let webhook):
            // Passed on as sent, such a number could crash a device decoding it with JSONDecoder.
            guard !JSONValue.object(webhook.data).containsUnsafeNumber else {
                throw APIError.invalidJSON("a number in data of 2^53 or more must stand for a whole number that fits 64 bits")
            }
            return (webhook, body)
        case .failure(.invalidJSON(let reason)):
            throw APIError.invalidJSON("the body is not valid JSON: \(reason)")
        case .failure(.notAnObject):
            throw APIError.invalidJSON("the body is not a JSON object")
        case .failure(.unknownShape(let reason)):
            if (try? JSONParser.parse(Array(buffer: body)))?.objectValue?["jsonrpc"] != nil {
                throw APIError(
                    .invalidNotification,
                    "an LSPS5 notification needs the \(LSPS5Webhook.timestampHeader) and \(LSPS5Webhook.signatureHeader) headers"
                )
            }
            throw APIError(
                .unknownBodyShape, "expected {\"event\": …, \"data\": {…}} or {\"template\": …, \"data\": {…}}: \(reason)"
            )
        }
    }
}
