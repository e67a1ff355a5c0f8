import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// `POST /api/v1/wake` and `GET /api/v1/forwarding_hint`: an LSP holding an HTLC for a phone
/// that may be asleep wakes it, and asks whether retrying the payment is worth it (seed 004).
struct WakeRoutes: Sendable {
    let intake: OutboxIntake
    let devices: any DeviceLookupStore
    let keys: any APIKeyStore
    let providers: PushRouter
    let presence: PresenceRegistry
    let metrics: HeraldMetrics
    let targetLimiter: TargetLimiter
    let settings: ServerSettings
    let now: @Sendable () -> Date
    /// Wake claims in a database other instances share; nil keeps them in ``presence``.
    var claims: (any WakeClaimStore)? = nil

    /// The longest kind accepted: it goes into a collapse id (64 bytes at most) and logs.
    static let maxKindBytes = 48
    static let maxPaymentHashBytes = 128

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        let group = router.group().add(middleware: APIKeyAuthenticator(keys: keys, scope: .wake))
        group.post("wake") { request, context in try await wake(request, context: context) }
        group.get("forwarding_hint") { request, context in try await hint(request, context: context) }
    }

    // MARK: Wake

    func wake(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let body = try await Edge.readJSONBody(WakeRequest.self, from: &request)
        try Self.validate(body, now: now())
        guard let resolution = try await devices.resolveDevice(id: body.device), let device = resolution.device else {
            throw APIError(.notFound, "unknown_device", "no device is registered under this id")
        }
        if resolution.isDead { throw WebhookRoutes.tokenUnregistered }
        let idempotencyKey = try Edge.idempotencyKey(request.headers, scope: "wake:\(device.id)")
        return try await wake(body, device: device, idempotencyKey: idempotencyKey)
    }

    /// Wakes a known device: no push while it is present (its held streams hear of it), none for
    /// a repeat within the window, otherwise its pushes committed in one transaction. `POST
    /// /wake` and LSPS5 notifications both wake through here.
    ///
    /// - Parameters:
    ///   - extraData: Data keys every push of the wake carries besides the wake's own.
    ///   - pushedStatus: The status when pushed: `202` for `/wake`; LSPS5 LSPs count only `200`.
    func wake(
        _ body: WakeRequest, device: Device, idempotencyKey: String?, extraData: [String: String] = [:],
        pushedStatus: HTTPResponse.Status = .accepted
    ) async throws -> Response {
        metrics.wakeRequested(kind: body.kind)
        let event = PresenceWakeEvent(kind: body.kind, paymentHash: body.paymentHash, amountMsat: body.amountMsat)
        let moment = now()
        // Seed 003's rule: no push while the app is connected; a held stream hears of it at once.
        if presence.isPresent(deviceID: device.id, now: moment) {
            presence.deliver(event, to: device.id, now: moment)
            metrics.wakeSkipped(reason: WakeAnswer.Reason.present.rawValue)
            return try JSONResponse.make(WakeAnswer(pushed: false, reason: .present))
        }
        let repeatKey = "\(device.id):" + (body.paymentHash.map { "hash:" + $0.lowercased() } ?? "kind:" + body.kind.rawValue)
        let claim = try await claimWake(repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: moment)
        if claim == .recentlyWoken {
            metrics.wakeSkipped(reason: WakeAnswer.Reason.recentlyWoken.rawValue)
            return try JSONResponse.make(WakeAnswer(pushed: false, reason: .recentlyWoken))
        }
        do {
            let target = PushTarget(platform: device.platform, token: device.token, app: device.app)
            // Sealed to the device's key when it has one; checked by the provider in the form sent.
            // A prelude (the silent push) is sealed and checked on its own, as it is sent on its own.
            func prepared(_ message: PushMessage) throws -> PushMessage {
                try PushSealing.prepare(
                    message, sealKey: device.sealKey, typeHint: message.data[WakePushKey.type] ?? body.kind.rawValue,
                    for: target, providers: providers
                )
            }
            let messages = try messages(for: body, platform: device.platform, extraData: extraData, now: moment).map { push, message in
                var main = message
                main.prelude = try message.prelude?.map(prepared)
                main = try prepared(main)
                return (push: push, message: main)
            }
            // A wake counts against its phone's allowance like any push; an idempotent retry is free.
            if claim != .replay { try await targetLimiter.takePushes(for: [target], metrics: metrics) }
            let expiresAt = messages[0].message.expiresAt ?? moment.addingTimeInterval(settings.jobTTL.timeInterval)
            let jobs = messages.map { push, message in
                (
                    job: NewJob(
                        platform: target.platform,
                        token: target.token,
                        notificationType: "wake:" + body.kind.rawValue,
                        payload: message.storedJSON(),
                        idempotencyKey: idempotencyKey.map { "\($0):\(push)" },
                        expiresAt: expiresAt,
                        app: target.app
                    ),
                    message: Optional(message)
                )
            }
            let results: [EnqueueResult]
            do {
                results = try await intake.submit(jobs)
            } catch {
                throw APIError(intakeFailure: error)
            }
            let duplicate = results.allSatisfy(\.duplicate)
            if !duplicate {
                let pushes = messages.flatMap { push, message in (message.prelude ?? []).map { _ in "silent" } + [push] }
                for push in pushes { metrics.wakePushed(push) }
                if device.sealKey != nil { metrics.sealed(count: pushes.count) }
                presence.woke(deviceID: device.id, now: moment)
            }
            var response = try JSONResponse.make(WakeAnswer(pushed: true, jobIDs: results.map(\.id)), status: pushedStatus)
            if duplicate { response.headers[WebhookRoutes.replayed] = "true" }
            return response
        } catch {
            // Nothing was pushed: a corrected retry must not be turned away as a repeat.
            if claim == .push { await releaseWake(repeatKey: repeatKey, claimedAt: moment) }
            throw error
        }
    }

    /// Claims the right to push, in the shared store when there is one.
    func claimWake(repeatKey: String, idempotencyKey: String?, now: Date) async throws -> PresenceRegistry.WakeClaim {
        guard let claims else { return presence.claimWake(repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: now) }
        let outcome: WakeClaimOutcome
        do {
            outcome = try await claims.claimWake(
                repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: now, window: presence.configuration.repeatWindow)
        } catch {
            throw APIError.storeUnavailable()
        }
        switch outcome {
        case .push: return .push
        case .replay: return .replay
        case .recentlyWoken: return .recentlyWoken
        }
    }

    func releaseWake(repeatKey: String, claimedAt: Date) async {
        guard let claims else { return presence.releaseWake(repeatKey: repeatKey) }
        try? await claims.releaseWake(repeatKey: repeatKey, at: claimedAt)
    }

    /// The jobs of a wake, each with its push's name for metrics and idempotency keys.
    ///
    /// On iOS one job: the alert (the reliable path, seed 004 §1.6), preceded on the wire by a
    /// silent push that may let the app finish in the background. Apple's delivery rules shape
    /// them: APNs stores one push per app for an offline phone and may reorder pushes, so the
    /// silent push is never stored (`apns-expiration: 0`) and collapses nothing, and the alert
    /// alone carries the expiry and the collapse id; sent as one job, the silent push is written
    /// first on the same connection by whichever instance sends it. On Android one
    /// high-priority data message, which always reaches the app's service.
    func messages(
        for wake: WakeRequest, platform: Platform, extraData: [String: String] = [:], now: Date
    ) throws -> [(push: String, message: PushMessage)] {
        var data = extraData
        data[WakePushKey.type] = wake.kind.rawValue
        if let hash = wake.paymentHash { data[WakePushKey.paymentHash] = hash }
        if let amount = wake.amountMsat { data[WakePushKey.amountMsat] = String(amount) }
        if let expiresAt = wake.expiresAt { data[WakePushKey.expiresAt] = String(Int64(expiresAt.timeIntervalSince1970.rounded(.down))) }
        let expiresAt = min(wake.expiresAt ?? .distantFuture, now.addingTimeInterval(settings.jobTTL.timeInterval))
        let collapseID = Self.collapseID(for: wake)
        switch platform {
        case .ios:
            var silentData = data
            silentData[WakePushKey.type] = wake.kind.silentPushType
            // No expiry: "deliver now or never". No collapse id: it must never replace the alert.
            let silent = PushMessage(kind: .background, data: silentData)
            let alert = PushMessage(
                kind: .wake, data: data, alert: wake.kind.defaultAlert, sound: "default",
                interruptionLevel: "time-sensitive", collapseID: collapseID, expiresAt: expiresAt, prelude: [silent]
            )
            return [("alert", alert)]
        case .android:
            return [("data", PushMessage(kind: .wake, data: data, collapseID: collapseID, expiresAt: expiresAt))]
        }
    }

    /// One id per payment (or per kind without a hash), so a repeat replaces the alert on the
    /// lock screen instead of stacking. A payment hash is 64 hex digits; 59 of them fit beside
    /// the prefix in APNs's 64 bytes and still never collide in practice.
    static func collapseID(for wake: WakeRequest) -> String {
        if let hash = wake.paymentHash { return "wake:" + hash.lowercased().prefix(59) }
        return "wake:" + wake.kind.rawValue
    }

    /// 1 to ``maxKindBytes`` letters, digits, `_`, `-` or `.`: safe in a collapse id and a log line.
    static func isValidKind(_ kind: String) -> Bool {
        !kind.isEmpty && kind.utf8.count <= maxKindBytes
            && kind.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
    }

    static func validate(_ wake: WakeRequest, now: Date) throws {
        guard BackendIDRules.isValid(wake.device) else {
            throw APIError.badRequest("invalid_device", "device must be the device_id from registration")
        }
        guard isValidKind(wake.kind.rawValue) else {
            throw APIError.badRequest("invalid_kind", "kind must be 1 to \(maxKindBytes) letters, digits, '_', '-' or '.'")
        }
        if let hash = wake.paymentHash {
            guard !hash.isEmpty, hash.utf8.count <= maxPaymentHashBytes, hash.utf8.allSatisfy(\.isHex) else {
                throw APIError.badRequest("invalid_payment_hash", "payment_hash must be hex, at most \(maxPaymentHashBytes) digits")
            }
        }
        if let expiresAt = wake.expiresAt, expiresAt <= now {
            throw APIError.badRequest("expired", "expires_at is in the past: nothing would be delivered")
        }
    }


    // MARK: Forwarding hint

    func hint(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let recipient = query.get("recipient"), !recipient.isEmpty else {
            throw APIError.badRequest("missing_recipient", "the query parameter 'recipient' (a device id) is required")
        }
        if let amount = query.get("amount_msat"), UInt64(amount) == nil {
            throw APIError.badRequest("invalid_amount", "amount_msat must be a whole number of millisatoshis")
        }
        let hint = try await forwardingHint(for: recipient)
        metrics.hintGiven(hint.hint)
        return try JSONResponse.make(hint)
    }

    /// The rules, in order (documented in the README):
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
