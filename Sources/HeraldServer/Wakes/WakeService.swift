import Crypto
import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird

/// Waking a known device: no push while it is present (its held streams hear of it),
/// none for a repeat within the waking window, otherwise its push through the delivery. `POST
/// /wake` and LSPS5 notifications both wake through here.
struct WakeService: Sendable {
    let delivery: PushDelivery
    let presence: PresenceRegistry
    let metrics: HeraldMetrics
    let settings: ServerSettings
    let now: @Sendable () -> Date
    /// Wake claims in a database other instances share; nil keeps them in ``presence``.
    var claims: (any WakeClaimStore)? = nil
    /// Wakes addressed to identities, their deliveries and acks; nil turns them off.
    var ledger: (any WakeLedgerStore & OutboxStore)? = nil
    /// The deployment's key of collapse ids, read from the ledger once.
    let collapseSecret = CollapseSecret()

    enum Outcome: Sendable, Hashable {
        /// The app is connected: the event went to its presence streams, nothing was pushed.
        case present
        /// The same payment (or kind) was woken within the waking window.
        case recentlyWoken
        /// Committed; `replayed` when a repeated idempotency key found the earlier jobs. The
        /// wake's id when it was recorded (not for a replay).
        case pushed(jobIDs: [String], replayed: Bool, wakeID: String? = nil)
    }

    /// - Parameter extraData: Data keys every push of the wake carries besides the wake's own.
    ///   - idempotencyFingerprint: What the key came with: another body under it is refused.
    func wake(
        _ body: WakeRequest, device: Device, idempotencyKey: String?, idempotencyFingerprint: String? = nil,
        extraData: [String: String] = [:]
    ) async throws -> Outcome {
        metrics.wakeRequested(kind: body.kind)
        // Before anything is claimed or recorded: a device the directory refuses is not woken.
        let reachable = try await delivery.directory.recipient(device, isDead: false)
        let event = PresenceWakeEvent(kind: body.kind, paymentHash: body.paymentHash, amountMsat: body.amountMsat)
        let moment = now()
        // No push while the app is connected: a held stream hears of it at once.
        if presence.isPresent(deviceID: device.id, now: moment) {
            presence.deliver(event, to: device.id, now: moment)
            metrics.wakeSkipped(reason: WakeAnswer.Reason.present.rawValue)
            return .present
        }
        let repeatKey = "\(device.id):" + (body.paymentHash.map { "hash:" + $0.lowercased() } ?? "kind:" + body.kind.rawValue)
        let claim = try await claimWake(repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: moment)
        if claim == .recentlyWoken {
            metrics.wakeSkipped(reason: WakeAnswer.Reason.recentlyWoken.rawValue)
            return .recentlyWoken
        }
        do {
            // The alert waits for the ack only where an ack can name the wake (the ledger), and
            // only on iOS: Android's and Web Push's data message always reaches the app.
            let alert = body.wakeAlert ?? settings.wakes.alert
            let fallbackAfter = body.fallbackAfterSecs ?? settings.wakes.fallbackAfter
            let usesFallback = alert == .fallback && device.platform == .ios && ledger != nil
            // Recorded before the push is committed: an ack racing it finds its wake.
            // A wake sent with an Idempotency-Key has an id made from the key: a retry answers the same one.
            let wakeID = idempotencyKey.map(Self.wakeID(forKey:)) ?? UUID().uuidString.lowercased()
            let recorded =
                claim == .replay ? nil : try await record(body, wakeID: wakeID, device: device, withFallback: usesFallback, now: moment)
            var extraData = extraData
            if let recorded { extraData[WakePushKey.wakeID] = recorded.wakeID }
            let (built, wakePush) = try self.message(for: body, platform: device.platform, extraData: extraData, now: moment)
            // With a fallback the job is the silent push alone; the alert waits in a job of its own.
            let (push, message) = usesFallback ? ("silent", wakePush.prelude?.first ?? wakePush) : (built, wakePush)
            var recipient = reachable
            recipient.idempotencyKey = idempotencyKey.map { "\($0):\(push)" }
            recipient.idempotencyFingerprint = idempotencyFingerprint
            recipient.jobID = recorded?.jobID
            // A wake counts against its phone's allowance like any push; an idempotent retry is free.
            let result = try await delivery.submit(
                message, type: "wake:" + body.kind.rawValue, sealedType: body.kind.rawValue, to: [recipient], metric: nil,
                chargesAllowance: claim != .replay
            )[0]
            if result.keyReused { throw APIError.idempotencyKeyReused }
            if !result.duplicate {
                for _ in message.prelude ?? [] { metrics.wakePushed("silent") }
                metrics.wakePushed(push)
                presence.woke(deviceID: device.id, now: moment)
            }
            if let fallbackJobID = recorded?.fallbackJobID, !result.duplicate {
                // The alert `always` would have sent, due later; a `handled` ack deletes it first.
                var fallbackRecipient = reachable
                fallbackRecipient.jobID = fallbackJobID
                var fallback = wakePush
                fallback.prelude = nil
                _ = try await delivery.submit(
                    fallback, type: Self.fallbackType, sealedType: body.kind.rawValue, to: [fallbackRecipient], metric: nil,
                    chargesAllowance: false, dueAt: moment.addingTimeInterval(TimeInterval(fallbackAfter)))
                metrics.wakeFallbackScheduled()
            }
            return .pushed(
                jobIDs: [result.id], replayed: result.duplicate,
                wakeID: ledger == nil ? nil : (result.duplicate && idempotencyKey == nil ? nil : wakeID))
        } catch {
            // Nothing was pushed: a corrected retry must not be turned away as a repeat.
            if claim == .push { await releaseWake(repeatKey: repeatKey, claimedAt: moment) }
            throw error
        }
    }

    /// Records a device's wake in the ledger, with the id its job will have.
    private func record(
        _ body: WakeRequest, wakeID: String, device: Device, withFallback: Bool, now: Date
    ) async throws -> (wakeID: String, jobID: String, fallbackJobID: String?)? {
        guard let ledger else { return nil }
        let jobID = JobID.make()
        let fallbackJobID = withFallback ? JobID.make() : nil
        let deadline = min(body.expiresAt ?? .distantFuture, now.addingTimeInterval(settings.jobTTL.timeInterval))
        try await ledger.recordWake(
            WakeRecord(id: wakeID, identity: "device:" + device.id, topic: body.kind.rawValue, deadline: deadline, createdAt: now),
            deliveries: [
                WakeDeliveryRecord(wakeID: wakeID, deviceID: device.id, jobID: jobID, fallbackJobID: fallbackJobID, present: false)
            ])
        return (wakeID, jobID, fallbackJobID)
    }

    /// A UUID made from an idempotency key (its SHA-256, version and variant bits set as RFC 9562's
    /// version 8 wants): the same key, the same wake id, on every instance.
    static func wakeID(forKey key: String) -> String {
        var bytes = Array(SHA256.hash(data: Array(("herald-wake-id:" + key).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }

    /// Claims the right to push, in the shared store when there is one.
    func claimWake(repeatKey: String, idempotencyKey: String?, now: Date) async throws -> PresenceRegistry.WakeClaim {
        guard let claims else { return presence.claimWake(repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: now) }
        let outcome: WakeClaimOutcome = try await claims.claimWake(
            repeatKey: repeatKey, idempotencyKey: idempotencyKey, now: now, window: presence.configuration.repeatWindow)
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

    /// The push of a wake, with its name for metrics and idempotency keys.
    ///
    /// On iOS one job: the alert (the reliable path: iOS may drop silent pushes), preceded on the wire by a
    /// silent push that may let the app finish in the background. Apple's delivery rules shape
    /// them: APNs stores one push per app for an offline phone and may reorder pushes, so the
    /// silent push is never stored (`apns-expiration: 0`) and collapses nothing, and the alert
    /// alone carries the expiry and the collapse id; sent as one job, the silent push is written
    /// first on the same connection by whichever instance sends it. On Android one
    /// high-priority data message, which always reaches the app's service; on Web Push one
    /// `Urgency: high` message with the same data, which a UnifiedPush distributor hands to the
    /// app at once.
    func message(
        for wake: WakeRequest, platform: Platform, extraData: [String: String] = [:], now: Date
    ) throws -> (push: String, message: PushMessage) {
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
            return ("alert", alert)
        case .android, .webpush:
            return ("data", PushMessage(kind: .wake, data: data, collapseID: collapseID, expiresAt: expiresAt))
        }
    }

    /// One id per payment (or per kind without a hash), so a repeat replaces the alert on the
    /// lock screen instead of stacking. A payment hash is 64 hex digits; 59 of them fit beside
    /// the prefix in APNs's 64 bytes and still never collide in practice.
    static func collapseID(for wake: WakeRequest) -> String {
        if let hash = wake.paymentHash { return "wake:" + hash.lowercased().prefix(59) }
        return "wake:" + wake.kind.rawValue
    }
}

extension WakeService.Outcome {
    /// The answer to a wake: `pushedStatus` when pushed (`202` for `/wake`; LSPS5 LSPs count
    /// only `200`), `200` with the reason when not.
    func response(pushedStatus: HTTPResponse.Status) throws -> Response {
        switch self {
        case .present: return try JSONResponse.make(WakeAnswer(pushed: false, reason: .present))
        case .recentlyWoken: return try JSONResponse.make(WakeAnswer(pushed: false, reason: .recentlyWoken))
        case .pushed(let jobIDs, let replayed, let wakeID):
            var response = try JSONResponse.make(WakeAnswer(pushed: true, jobIDs: jobIDs, wakeID: wakeID), status: pushedStatus)
            if replayed { response.headers[Edge.replayed] = "true" }
            return response
        }
    }
}
