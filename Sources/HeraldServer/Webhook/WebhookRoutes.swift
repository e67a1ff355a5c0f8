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
    /// `registration: challenge`: unconfirmed devices are pushed nothing but their challenge.
    let challenges: any DeviceChallengeStore
    /// LSPS5 notifications, the third body shape.
    let lsps5: LSPS5Intake

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
        var recipient = try await resolveTarget(query)
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
        recipient.idempotencyKey = try Edge.idempotencyKey(request.headers, scope: "\(target.platform.rawValue):\(target.token)")
        if recipient.idempotencyKey != nil { recipient.idempotencyFingerprint = Self.fingerprint(body, appData: appData) }
        let result = try await delivery.submit(webhook, to: recipient, appData: appData)
        // Whoever knows a token could otherwise plant a job under the key the real service will
        // use, and the real call would be answered with it.
        if result.keyReused { throw APIError.idempotencyKeyReused }
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
        if resolution.isDead { throw APIError.tokenUnregistered }
        try await Edge.requireConfirmed(device, settings: settings, challenges: challenges)
        let body = try await Edge.readRequiredBody(&request, limit: Self.maxBodyBytes)
        return try await lsps5.receive(body: Array(buffer: body), headers: request.headers, device: device)
    }

    /// Finds the push token behind the `token` parameter: a registered alias, or (when the
    /// operator allows it) a raw push token, as Breez-style integrations send. A registered
    /// device's seal key comes with it, read in the same lookup.
    func resolveTarget(_ query: Parameters) async throws -> PushDelivery.Recipient {
        guard let given = query.get("token"), !given.isEmpty else {
            throw APIError(.missingToken, "the query parameter 'token' is required")
        }
        try Edge.checkPushToken(given, field: "token")
        let platform = try query.get("platform").map(Edge.parsePlatform)
        // One spelling before the lookup: the dead mark, the allowance and the idempotency key
        // all see the token as registration stores it.
        let token = platform.map { PushTokenForm.normalized(given, platform: $0) } ?? given
        let resolution = try await devices.resolveWebhookToken(token, rawPlatform: platform)
        if resolution.isDeletedAlias { throw APIError.deviceDeleted }
        let target: PushTarget
        if let device = resolution.device {
            try await Edge.requireConfirmed(device, settings: settings, challenges: challenges)
            target = PushTarget(platform: device.platform, token: device.token, app: device.app)
        } else if settings.acceptRawTokens, !DeviceAlias.hasAliasForm(token) {
            guard let platform else {
                throw APIError(.missingPlatform, "the query parameter 'platform' is required")
            }
            // A subscription carries its keys and a URL Herald would be told to POST to: only
            // registration, which checks both, may name one.
            guard platform != .webpush else {
                throw APIError(.aliasRequired, "a Web Push device is reached only through its registered alias (POST /api/v1/devices)")
            }
            try Edge.checkPushToken(token, platform: platform, field: "token")
            // A raw token names its app in the query; a registered device's is its own.
            let app = try Edge.checkApp(query.get("app"), providers: providers)
            target = PushTarget(platform: platform, token: token, app: app)
        } else {
            throw APIError(.unknownToken, "no device is registered under this token")
        }
        if resolution.isDead { throw APIError.tokenUnregistered }
        var recipient = PushDelivery.Recipient(target: target, sealKey: resolution.device?.sealKey)
        recipient.registered = resolution.device != nil
        return recipient
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
