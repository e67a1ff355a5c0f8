import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// Every push a route causes goes through here: webhooks, relayed requests and the Lightning
/// address, wakes and LSPS5, backend events. It applies the rules each push obeys, in one order:
/// sealed to the device's key when it registered one and checked by its provider in the form
/// sent; each device's push allowance taken for all recipients or none; committed through the
/// intake in one group commit; counted. Routes parse and answer; they never call each other.
struct PushDelivery: Sendable {
    let intake: OutboxIntake
    let relay: ReplyRelay
    let devices: any DeviceStore
    /// Who may be pushed: every route's way from an alias, a device or an identity to targets.
    let directory: DeviceDirectory
    let providers: PushRouter
    let targets: TargetLimiter
    let metrics: HeraldMetrics
    let settings: ServerSettings
    let now: @Sendable () -> Date

    /// Where one copy of a push goes.
    struct Recipient: Sendable {
        var target: PushTarget
        /// The device's seal key: its copy is sealed to it, so Apple and Google carry only ciphertext.
        var sealKey: SealPublicKey?
        /// Scoped by the caller to the recipient, so two callers' keys never collide.
        var idempotencyKey: String?
        /// A digest of the request the key came with (``NewJob/idempotencyFingerprint``).
        var idempotencyFingerprint: String?
        /// A registered device (its alias was named), not a raw push token anyone could name.
        var registered = true
        /// The job's id when the caller records it before the job is committed (a wake's ledger).
        var jobID: String?

        init(target: PushTarget, sealKey: SealPublicKey? = nil, idempotencyKey: String? = nil) {
            self.target = target
            self.sealKey = sealKey
            self.idempotencyKey = idempotencyKey
        }
    }

    /// Sends `message` to every recipient, one job each, committed together or not at all.
    ///
    /// - Parameters:
    ///   - type: The job's `notification_type`.
    ///   - sealedType: The clear `sealed_type` of a sealed copy; `type` when nil. A prelude's is
    ///     its own `type` data key (a wake's silent push) when it has one.
    ///   - metric: Counted in `herald_notifications_received_total{type}` per job newly
    ///     committed; nil when the caller counts its own (wakes).
    ///   - chargesAllowance: False for an idempotent retry of a push that was charged already.
    ///   - dueAt: Not sent before then (a wake's fallback alert); nil: at once.
    /// - Returns: One result per recipient, in order.
    func submit(
        _ message: PushMessage, type: String, sealedType: String? = nil, to recipients: [Recipient], metric: String?,
        chargesAllowance: Bool = true, dueAt: Date? = nil
    ) async throws -> [EnqueueResult] {
        guard !recipients.isEmpty else { return [] }
        // A retry of what was committed already is answered from the store: it takes no push
        // allowance (Breez, an LSP or a backend retrying must not run a phone's share down) and
        // commits nothing.
        if chargesAllowance, let replayed = try await earlierJobs(for: recipients) { return replayed }
        let expiresAt = message.expiresAt ?? now().addingTimeInterval(settings.jobTTL.timeInterval)
        // Rendered once for every recipient without a seal key.
        var clearPayload: Data?
        var jobs: [(job: NewJob, message: PushMessage?)] = []
        jobs.reserveCapacity(recipients.count)
        // Checks first: they hold no state, so a refused push has taken nothing.
        for recipient in recipients {
            let prepared = try prepare(message, sealedType: sealedType ?? type, sealKey: recipient.sealKey, for: recipient.target)
            let payload: Data
            if recipient.sealKey == nil {
                payload = clearPayload ?? prepared.storedJSON()
                clearPayload = payload
            } else {
                payload = prepared.storedJSON()
            }
            var job = NewJob(
                destination: recipient.target.destination, token: recipient.target.token, notificationType: type,
                payload: payload, idempotencyKey: recipient.idempotencyKey,
                idempotencyFingerprint: recipient.idempotencyKey == nil ? nil : recipient.idempotencyFingerprint,
                expiresAt: expiresAt, app: recipient.target.app
            )
            if let id = recipient.jobID { job.id = id }
            job.dueAt = dueAt
            jobs.append((job, prepared))
        }
        if chargesAllowance { try await targets.takePushes(for: recipients.map(\.target), metrics: metrics) }
        let results: [EnqueueResult]
        do {
            results = jobs.count == 1 ? [try await intake.submit(jobs[0].job, message: jobs[0].message)] : try await intake.submit(jobs)
        } catch {
            throw APIError(intakeFailure: error)
        }
        let pushesPerJob = 1 + (message.prelude?.count ?? 0)
        for (result, recipient) in zip(results, recipients) where !result.duplicate {
            if let metric { metrics.received(type: metric) }
            if recipient.sealKey != nil { metrics.sealed(count: pushesPerJob) }
        }
        return results
    }

    /// Sends `message` to each recipient that has push allowance left, one job each: a device
    /// over its share is left out (nil in its place) and the others still go. A recipient whose
    /// idempotency key made a job already is answered with it and charged nothing. When every
    /// recipient is over its share, nothing is sent and the caller gets `429
    /// target_rate_limited`, as for one device.
    func submitEach(_ message: PushMessage, type: String, to recipients: [Recipient], metric: String?) async throws -> [EnqueueResult?] {
        guard !recipients.isEmpty else { return [] }
        let earlier: [String: EarlierJob]
        do {
            earlier = try await intake.store.jobs(idempotencyKeys: recipients.compactMap(\.idempotencyKey))
        } catch {
            throw APIError(intakeFailure: error)
        }
        var results = [EnqueueResult?](repeating: nil, count: recipients.count)
        var admitted: [(index: Int, recipient: Recipient)] = []
        var refusal: APIError?
        for (index, recipient) in recipients.enumerated() {
            if let key = recipient.idempotencyKey, let job = earlier[key] {
                results[index] = EnqueueResult(
                    id: job.id, duplicate: true, keyReused: EnqueueResult.reused(earlier: job.fingerprint, now: recipient.idempotencyFingerprint))
                continue
            }
            if let refused = try await takeShare(of: recipient.target) {
                refusal = refused
            } else {
                admitted.append((index, recipient))
            }
        }
        if admitted.isEmpty, results.compactMap({ $0 }).isEmpty, let refusal { throw refusal }
        let sent = try await submit(message, type: type, to: admitted.map(\.recipient), metric: metric, chargesAllowance: false)
        for (entry, result) in zip(admitted, sent) { results[entry.index] = result }
        return results
    }

    /// Takes one push of `target`'s allowance for a push to several devices: nil when taken; the
    /// refusal (`429 target_rate_limited`, with its wait) when the device has had its share and
    /// the others should go without it.
    func takeShare(of target: PushTarget) async throws -> APIError? {
        do {
            try await targets.takePushes(for: [target], metrics: metrics)
            return nil
        } catch let error as APIError where error.code == .targetRateLimited {
            return error
        }
    }

    /// The earlier jobs when every recipient's idempotency key made one already; nil otherwise.
    private func earlierJobs(for recipients: [Recipient]) async throws -> [EnqueueResult]? {
        let keys = recipients.compactMap(\.idempotencyKey)
        guard keys.count == recipients.count else { return nil }
        let earlier: [String: EarlierJob]
        do {
            earlier = try await intake.store.jobs(idempotencyKeys: keys)
        } catch {
            throw APIError(intakeFailure: error)
        }
        guard earlier.count == Set(keys).count else { return nil }
        return recipients.map { recipient in
            let job = earlier[recipient.idempotencyKey ?? ""]
            return EnqueueResult(
                id: job?.id ?? "", duplicate: true,
                keyReused: EnqueueResult.reused(earlier: job?.fingerprint, now: recipient.idempotencyFingerprint))
        }
    }

    /// `message` as it is stored for one recipient: sealed when `sealKey` is set, its prelude
    /// too, each checked by the recipient's provider in the form sent.
    private func prepare(
        _ message: PushMessage, sealedType: String, sealKey: SealPublicKey?, for target: PushTarget
    ) throws -> PushMessage {
        var main = message
        main.prelude = try message.prelude?.map { push in
            try PushSealing.prepare(
                push, sealKey: sealKey, typeHint: push.data[WakePushKey.type] ?? sealedType, for: target, providers: providers)
        }
        return try PushSealing.prepare(main, sealKey: sealKey, typeHint: sealedType, for: target, providers: providers)
    }
}
