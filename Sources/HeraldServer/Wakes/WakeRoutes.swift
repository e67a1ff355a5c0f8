import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWake
import HeraldWire
import Hummingbird

/// `POST /api/v1/wake` and `GET /api/v1/forwarding_hint`: an LSP holding an HTLC for a phone
/// that may be asleep wakes it, and asks whether retrying the payment is worth it.
struct WakeRoutes: Sendable {
    let wakes: WakeService
    let devices: any DeviceLookupStore
    let keys: any APIKeyStore
    let providers: PushRouter
    let metrics: HeraldMetrics
    let now: @Sendable () -> Date

    var presence: PresenceRegistry { wakes.presence }

    /// The longest kind accepted: it goes into a collapse id (64 bytes at most) and logs.
    static let maxKindBytes = 48
    static let maxPaymentHashBytes = 128
    /// The longest wait for a `handled` ack before a fallback wake's alert: past a minute the
    /// payment it announces has timed out at its sender.
    static let maxFallbackAfterSecs = 60

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        let group = router.group().add(middleware: APIKeyAuthenticator(keys: keys, scope: .wake))
        group.post("wake") { request, context in try await wake(request, context: context) }
        group.get("wake/{wake_id}") { _, context in try await status(context) }
        group.get("forwarding_hint") { request, context in try await hint(request, context: context) }
    }

    // MARK: Wake

    func wake(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let raw = try await Edge.readRequiredBody(&request, limit: Edge.jsonBodyLimit)
        let parsed = try Edge.parseJSONObject(Data(buffer: raw))
        // An identity and a topic: a wake of every device that proved it (the wake gateway's).
        if parsed["identity"] != nil {
            let body = try Edge.decode(IdentityWakeRequest.self, parsed: parsed, from: Data(buffer: raw))
            let idempotencyKey = try Edge.idempotencyKey(request.headers, scope: "wake-identity:\(body.identity)")
            let (answer, replayed) = try await wakes.wake(
                body, idempotencyKey: idempotencyKey,
                idempotencyFingerprint: idempotencyKey.map { _ in EnqueueResult.fingerprint(of: Array(buffer: raw)) })
            var response = try JSONResponse.make(answer, status: .accepted)
            if replayed { response.headers[Edge.replayed] = "true" }
            return response
        }
        let body = try Edge.decode(WakeRequest.self, parsed: parsed, from: Data(buffer: raw))
        try Self.validate(body, now: now())
        guard let resolution = try await devices.resolveDevice(id: body.device), let device = resolution.device else {
            throw APIError(.unknownDevice, "no device is registered under this id")
        }
        if resolution.isDead { throw APIError.tokenUnregistered }
        let idempotencyKey = try Edge.idempotencyKey(request.headers, scope: "wake:\(device.id)")
        let fingerprint = try idempotencyKey.map { _ in EnqueueResult.fingerprint(of: try WireJSON.encode(body)) }
        return try await wakes.wake(body, device: device, idempotencyKey: idempotencyKey, idempotencyFingerprint: fingerprint)
            .response(pushedStatus: .accepted)
    }

    /// `GET /api/v1/wake/{wake_id}`: a wake by identity, and what became of it on each device.
    func status(_ context: HeraldRequestContext) async throws -> Response {
        let id = context.parameters.get("wake_id") ?? ""
        guard let uuid = UUID(uuidString: id), let status = try await wakes.status(wakeID: uuid.uuidString.lowercased()) else {
            throw APIError(.unknownWake, "no wake has this id")
        }
        return try JSONResponse.make(status)
    }

    /// 1 to ``maxKindBytes`` letters, digits, `_`, `-` or `.`: safe in a collapse id and a log line.
    static func isValidKind(_ kind: String) -> Bool {
        !kind.isEmpty && kind.utf8.count <= maxKindBytes
            && kind.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
    }

    static func validate(_ wake: WakeRequest, now: Date) throws {
        guard BackendIDRules.isValid(wake.device) else {
            throw APIError(.invalidDevice, "device must be the device_id from registration")
        }
        guard isValidKind(wake.kind.rawValue) else {
            throw APIError(.invalidKind, "kind must be 1 to \(maxKindBytes) letters, digits, '_', '-' or '.'")
        }
        if let hash = wake.paymentHash {
            guard !hash.isEmpty, hash.utf8.count <= maxPaymentHashBytes, hash.utf8.allSatisfy(\.isHex) else {
                throw APIError(.invalidPaymentHash, "payment_hash must be hex, at most \(maxPaymentHashBytes) digits")
            }
        }
        if let seconds = wake.fallbackAfterSecs, !(1...maxFallbackAfterSecs).contains(seconds) {
            throw APIError(.invalidFallbackAfter, "fallback_after_secs must be 1 to \(maxFallbackAfterSecs)")
        }
        if let expiresAt = wake.expiresAt, expiresAt <= now {
            throw APIError(.expired, "expires_at is in the past: nothing would be delivered")
        }
    }

    // MARK: Forwarding hint

    func hint(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let recipient = query.get("recipient"), !recipient.isEmpty else {
            throw APIError(.missingRecipient, "the query parameter 'recipient' (a device id) is required")
        }
        if let amount = query.get("amount_msat"), UInt64(amount) == nil {
            throw APIError(.invalidAmount, "amount_msat must be a whole number of millisatoshis")
        }
        let hint = try await forwardingHint(for: recipient)
        metrics.hintGiven(hint.hint)
        return try JSONResponse.make(hint)
    }

    /// The rules, in order (documented in docs/wakes.md):
    /// unknown device, dead token or no provider for its platform → `do_not_retry`;
    /// present → `retry_now`; woken within the waking window → `retry_later` after the expected
    /// remaining wake time; otherwise → `retry_later` after a whole expected wake time
    /// (`disconnected`: wake it first).
    func forwardingHint(for deviceID: String) async throws -> ForwardingHint {
        guard BackendIDRules.isValid(deviceID), let resolution = try await devices.resolveDevice(id: deviceID),
            let device = resolution.device
        else {
            return ForwardingHint(hint: .doNotRetry, reason: .unknownDevice)
        }
        if resolution.isDead { return ForwardingHint(hint: .doNotRetry, reason: .tokenUnregistered) }
        guard providers.provider(for: device.platform, app: device.app) != nil else {
            return ForwardingHint(hint: .doNotRetry, reason: "no_push_provider")
        }
        switch presence.standing(deviceID: device.id, now: now()) {
        case .present:
            return ForwardingHint(hint: .retryNow, reason: .present, recommendedDelayMs: Self.retryNowDelayMs)
        case .waking(_, let remaining):
            return ForwardingHint(hint: .retryLater, reason: .waking, recommendedDelayMs: Self.milliseconds(remaining))
        case .away(let expected):
            return ForwardingHint(hint: .retryLater, reason: .disconnected, recommendedDelayMs: Self.milliseconds(expected))
        }
    }

    /// A present app's node may still be reconnecting to its LSP: a short pause, not none.
    static let retryNowDelayMs = 250

    static func milliseconds(_ seconds: TimeInterval) -> Int { Int((seconds * 1000).rounded(.up)) }
}
