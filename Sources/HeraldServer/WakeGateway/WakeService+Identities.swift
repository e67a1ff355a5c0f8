import Crypto
import Foundation
import HeraldPush
import HeraldSecp256k1
import HeraldStore
import HeraldWake
import HeraldWire
import NIOConcurrencyHelpers

/// The key of a deployment's collapse ids: made once, kept in the database, shared by every
/// instance; read once per process.
final class CollapseSecret: Sendable {
    private let value = NIOLockedValueBox<[UInt8]?>(nil)
    static let name = "wake_collapse_hmac"

    func get(from ledger: any WakeLedgerStore, now: Date) async throws -> [UInt8] {
        if let known = value.withLockedValue({ $0 }) { return known }
        let stored = Array(try await ledger.sharedSecret(name: Self.name, now: now) { SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) } })
        value.withLockedValue { $0 = stored }
        return stored
    }
}

/// Wakes addressed to an identity on a topic (Bitkit's wake gateway): every device holding the
/// identity and subscribing to the topic gets one sealed push, unless present; an alertable
/// topic's devices also get a fallback alert, due `fallback_after_secs` later, which a
/// `handled` ack cancels. The wake, its deliveries and their acks are kept in the ledger, so
/// `GET /api/v1/wake/{id}` answers what became of it on any instance.
extension WakeService {
    /// The largest producer payload, compact: it travels sealed in a 4 KB push.
    static let maximumPayloadBytes = 1024
    static let maximumCollapseKeyBytes = 256
    /// The FCM notification channel of fallback alerts (bitkit-core's vectors).
    static let fallbackChannel = "wake"

    /// - Parameters:
    ///   - idempotencyKey: Scoped by the caller. The wake's id is made from it, so a retry finds the
    ///     wake it made and is answered with it (`replayed`), pushing nothing again; the same key
    ///     with another body is `422 idempotency_key_reused`.
    ///   - idempotencyFingerprint: A digest of the body the key came with.
    func wake(
        _ request: IdentityWakeRequest, idempotencyKey: String? = nil, idempotencyFingerprint: String? = nil
    ) async throws -> (answer: IdentityWakeAnswer, replayed: Bool) {
        guard let ledger else { throw APIError(.notFound, "wakes by identity are not served here") }
        guard ProvenIdentity(request.identity) != nil else {
            throw APIError(.invalidIdentity, "identity must be ln:<66 lower-case hex> or pk:<52 z-base-32>")
        }
        guard let topic = settings.wakeGateway.topic(request.topic) else {
            throw APIError(.unknownTopic, "no topic '\(request.topic.prefix(64))' is configured (wake_gateway.topics)")
        }
        var payloadBytes = 0
        if let payload = request.payload {
            var writer = JSONWriter()
            writer.value(payload)
            payloadBytes = writer.bytes.count
        }
        guard payloadBytes <= Self.maximumPayloadBytes else {
            throw APIError(.wakePayloadTooLarge, "payload is \(payloadBytes) bytes written compactly; at most \(Self.maximumPayloadBytes)")
        }
        if let key = request.collapseKey, key.isEmpty || key.utf8.count > Self.maximumCollapseKeyBytes {
            throw APIError(.invalidCollapseKey, "collapse_key must be 1 to \(Self.maximumCollapseKeyBytes) bytes")
        }
        let wakeID = idempotencyKey.map(Self.wakeID(forKey:)) ?? UUID().uuidString.lowercased()
        if let idempotencyKey,
            let earlier = try await earlierWake(
                wakeID, for: request, key: idempotencyKey, fingerprint: idempotencyFingerprint, ledger: ledger)
        {
            return (earlier, true)
        }
        let moment = now()
        let entries: [WakeGatewayEntry]
        let secret: [UInt8]
        entries = try await ledger.wakeGatewayDevices(identity: request.identity).filter { entry in
            entry.gateway.topics.contains { WakeTopicName.subscription($0, matches: topic.name) }
        }
        secret = try await collapseSecret.get(from: ledger, now: moment)
        let deadline = Int64(moment.timeIntervalSince1970.rounded(.down)) + Int64(topic.deadlineSeconds)
        let collapseID = request.collapseKey.map {
            WakePushes.collapseID(secret: secret, identity: request.identity, topic: topic.name, collapseKey: $0)
        }
        // Everything is decided and recorded before any push is committed: an ack racing the
        // push always finds its wake.
        var planned: [(entry: WakeGatewayEntry, push: PushMessage?, fallback: PushMessage?, delivery: WakeDeliveryRecord)] = []
        var skipped = 0
        for entry in entries {
            // The directory's rules, then the device's own allowance: one device that may not be
            // pushed, or is over its share, is left out and the identity's others still go.
            // Recorded as neither pushed nor present: a retry under the same key answers the same.
            let left = WakeDeliveryRecord(wakeID: wakeID, deviceID: entry.device.id, jobID: nil, fallbackJobID: nil, present: false)
            if let skip = try await delivery.directory.skip(entry.device, isDead: entry.isDead) {
                metrics.deviceSkipped(skip.rawValue)
                skipped += 1
                planned.append((entry, nil, nil, left))
                continue
            }
            let present = presence.isPresent(deviceID: entry.device.id, now: moment)
            if !present, try await delivery.takeShare(of: DeviceDirectory.recipient(entry.device).target) != nil {
                metrics.deviceSkipped("rate_limited")
                skipped += 1
                planned.append((entry, nil, nil, left))
                continue
            }
            var delivery = WakeDeliveryRecord(wakeID: wakeID, deviceID: entry.device.id, jobID: nil, fallbackJobID: nil, present: present)
            guard !present else {
                planned.append((entry, nil, nil, delivery))
                continue
            }
            let push = try gatewayPush(
                for: entry, wakeID: wakeID, topic: topic, deadline: deadline, payload: request.payload, collapseID: collapseID, now: moment)
            // Under an idempotency key the jobs' ids come from it too: two retries racing each
            // other record and commit the same jobs, and the ledger names the ones that exist.
            delivery.jobID = idempotencyKey.map { Self.wakeID(forKey: "\($0):\(entry.device.id):push") } ?? JobID.make()
            var fallback: PushMessage?
            if topic.alertable, entry.gateway.envelope == 1, let text = topic.text {
                fallback = fallbackPush(
                    for: entry, wakeID: wakeID, topic: topic, text: text, deadline: deadline, collapseID: collapseID, now: moment)
                delivery.fallbackJobID = idempotencyKey.map { Self.wakeID(forKey: "\($0):\(entry.device.id):fallback") } ?? JobID.make()
            }
            planned.append((entry, push, fallback, delivery))
        }
        let record = WakeRecord(
            id: wakeID, identity: request.identity, topic: topic.name, deadline: Date(timeIntervalSince1970: TimeInterval(deadline)),
            createdAt: moment)
        try await ledger.recordWake(record, deliveries: planned.map(\.delivery))
        for (entry, push, fallback, record) in planned {
            guard let push, let jobID = record.jobID else {
                if record.present { metrics.wakeSkipped(reason: WakeAnswer.Reason.present.rawValue) }
                continue
            }
            // Gateway pushes are sealed to the device's wake key, not a seal key: the target alone.
            let target = DeviceDirectory.recipient(entry.device).target
            var recipient = PushDelivery.Recipient(target: target)
            recipient.jobID = jobID
            recipient.idempotencyKey = idempotencyKey.map { "\($0):\(entry.device.id)" }
            recipient.idempotencyFingerprint = idempotencyFingerprint
            _ = try await delivery.submit(push, type: "wake:" + topic.name, to: [recipient], metric: nil, chargesAllowance: false)
            metrics.wakePushed(entry.device.platform == .ios ? (topic.urgency == .background ? "silent" : "alert") : "data")
            presence.woke(deviceID: entry.device.id, now: moment)
            if let fallback, let fallbackID = record.fallbackJobID {
                var fallbackRecipient = PushDelivery.Recipient(target: target)
                fallbackRecipient.jobID = fallbackID
                // Part of the wake already counted: it takes none of the device's allowance.
                _ = try await delivery.submit(
                    fallback, type: Self.fallbackType, to: [fallbackRecipient], metric: nil, chargesAllowance: false,
                    dueAt: moment.addingTimeInterval(TimeInterval(topic.fallbackAfterSeconds)))
                metrics.wakeFallbackScheduled()
            }
        }
        let answer = Self.answer(wakeID: wakeID, planned.map(\.delivery))
        metrics.identityWoken(devices: answer.devices)
        return (answer, false)
    }

    /// What a wake's deliveries say: pushed, present, and left out (neither).
    static func answer(wakeID: String, _ deliveries: [WakeDeliveryRecord]) -> IdentityWakeAnswer {
        let pushed = deliveries.filter { $0.jobID != nil }.count
        let present = deliveries.filter(\.present).count
        return IdentityWakeAnswer(
            wakeID: wakeID, devices: pushed + present, pushed: pushed, present: present, skipped: deliveries.count - pushed - present)
    }

    /// The wake an earlier request under `key` made, answered again; nil when there is none. The
    /// same key with another identity, topic or body is refused.
    private func earlierWake(
        _ wakeID: String, for request: IdentityWakeRequest, key: String, fingerprint: String?, ledger: any WakeLedgerStore
    ) async throws
        -> IdentityWakeAnswer?
    {
        let earlier: (WakeRecord, [WakeDeliveryRecord])?
        let jobs: [String: EarlierJob]
        earlier = try await ledger.wake(id: wakeID)
        guard let (_, deliveries) = earlier else { return nil }
        jobs = try await delivery.intake.store.jobs(idempotencyKeys: deliveries.filter { $0.jobID != nil }.map { "\(key):\($0.deviceID)" })
        guard let (record, deliveries) = earlier else { return nil }
        // The jobs carry the body's digest; a wake that pushed nothing has only its identity and topic.
        if record.identity != request.identity || record.topic != request.topic
            || jobs.values.contains(where: { EnqueueResult.reused(earlier: $0.fingerprint, now: fingerprint) })
        {
            throw APIError.idempotencyKeyReused
        }
        return Self.answer(wakeID: wakeID, deliveries)
    }

    /// The job type of fallback alerts (metrics count them when sent).
    static let fallbackType = "wake_fallback"

    /// The sealed push of one device: v1 or, for a device registered on the legacy route, v0.
    func gatewayPush(
        for entry: WakeGatewayEntry, wakeID: String, topic: WakeGatewayTopic, deadline: Int64, payload: JSONValue?, collapseID: String?,
        now: Date
    ) throws -> PushMessage {
        guard let recipient = NodeID(hex: entry.gateway.encryptionKey) else {
            throw APIError(.internalError, "a device's encryption key no longer parses")
        }
        let ttl = max(0, deadline - Int64(now.timeIntervalSince1970.rounded(.down)))
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(deadline))
        let kind: PushMessage.Kind
        let verbatim: PushMessage.Verbatim
        if entry.gateway.envelope == 0 {
            let plaintext = WakeEnvelope.v0Plaintext(topic: topic.name, payload: payload, createdAt: ISOTimestamp.text(now))
            let container = WakeContainer(version: 0, sealed: try WakeSealing.seal(plaintext, to: recipient, label: WakeSealing.v0Label))
            kind = .wake
            verbatim =
                entry.device.platform == .ios
                ? Self.verbatim(WakePushes.apnsV0(apnsTopic: nil, apnsID: UUID().uuidString.lowercased(), expiration: deadline, container: container))
                : Self.verbatim(fcm: WakePushes.fcmV0(token: entry.device.token, ttlSeconds: ttl, container: container))
        } else {
            let plaintext = WakeEnvelope.v1Plaintext(id: wakeID, topic: topic.name, urgency: topic.urgency, deadline: deadline, payload: payload)
            let container = WakeContainer(version: 1, sealed: try WakeSealing.seal(plaintext, to: recipient, label: WakeSealing.v1Label))
            kind = topic.urgency == .background ? .background : .wake
            verbatim =
                entry.device.platform == .ios
                ? Self.verbatim(
                    WakePushes.apnsV1(
                        apnsTopic: nil, apnsID: UUID().uuidString.lowercased(), expiration: deadline, urgency: topic.urgency, wakeID: wakeID,
                        topic: topic.name, collapseKey: collapseID, text: topic.text, container: container))
                : Self.verbatim(
                    fcm: WakePushes.fcmV1(
                        token: entry.device.token, ttlSeconds: ttl, highPriority: topic.urgency != .background || topic.alertable,
                        collapseKey: collapseID, container: container))
        }
        return PushMessage(kind: kind, data: ["type": topic.name], expiresAt: expiresAt, verbatim: verbatim)
    }

    /// The visible alert of a wake not handled in time; it expires at the deadline.
    func fallbackPush(
        for entry: WakeGatewayEntry, wakeID: String, topic: WakeGatewayTopic, text: NotificationText, deadline: Int64, collapseID: String?,
        now: Date
    ) -> PushMessage {
        let due = Int64(now.timeIntervalSince1970.rounded(.down)) + Int64(topic.fallbackAfterSeconds)
        let verbatim =
            entry.device.platform == .ios
            ? Self.verbatim(
                WakePushes.apnsFallback(
                    apnsTopic: nil, apnsID: UUID().uuidString.lowercased(), expiration: deadline, urgency: topic.urgency, wakeID: wakeID,
                    topic: topic.name, collapseKey: collapseID, text: text))
            : Self.verbatim(
                fcm: WakePushes.fcmFallback(
                    token: entry.device.token, ttlSeconds: max(0, deadline - due), wakeID: wakeID, topic: topic.name, collapseKey: collapseID,
                    text: text, channelID: Self.fallbackChannel))
        return PushMessage(
            kind: .alert, data: ["type": Self.fallbackType], alert: text,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(deadline)), verbatim: verbatim)
    }

    /// An APNs request kept as sent; with no `apns-topic` of its own, it goes to the provider's.
    static func verbatim(_ request: WakePushes.APNsRequest) -> PushMessage.Verbatim {
        PushMessage.Verbatim(apns: request.apns, body: request.body)
    }

    /// An FCM body kept as sent.
    static func verbatim(fcm body: String) -> PushMessage.Verbatim {
        PushMessage.Verbatim(body: body)
    }

    // MARK: Acks and status

    /// A device's answer to a wake: recorded; `handled` cancels its fallback, `received` gives
    /// it `wake_fallback_grace` more. Nil when the wake was not delivered to the device.
    func acknowledge(wakeID: String, deviceID: String, outcome: WakeAckOutcome) async throws -> WakeDeliveryRecord? {
        guard let ledger else { return nil }
        let moment = now()
        let delivery: WakeDeliveryRecord? = try await ledger.acknowledgeWake(
            id: wakeID, deviceID: deviceID, outcome: outcome, now: moment, receivedGrace: TimeInterval(settings.wakes.fallbackGrace))
        // Counted when recorded now: a repeat, or an ack after `handled`, left the earlier one.
        if let delivery, delivery.outcome == outcome, delivery.ackedAt == moment {
            metrics.wakeAcked(outcome)
            if delivery.fallbackCancelled { metrics.wakeFallbackCancelled() }
        }
        return delivery
    }

    /// What the producer asked for and what became of it on each device.
    func status(wakeID: String) async throws -> WakeStatus? {
        guard let ledger else { return nil }
        guard let (wake, deliveries) = try await ledger.wake(id: wakeID) else { return nil }
        var devices: [WakeStatus.Device] = []
        for delivery in deliveries {
            let pushed = try await delivery.jobID.asyncMap { try await ledger.status(jobID: $0)?.state } ?? nil
            let fallbackState = try await delivery.fallbackJobID.asyncMap { try await ledger.status(jobID: $0)?.state } ?? nil
            let fallback: WakeStatus.Device.Fallback
            switch (delivery.fallbackJobID, fallbackState) {
            case (nil, _): fallback = .none
            case (_, .delivered?): fallback = .sent
            case (_, .dead?): fallback = .failed
            case (_, .pending?): fallback = .pending
            case (_, nil): fallback = delivery.fallbackCancelled ? .cancelled : .none
            }
            devices.append(
                WakeStatus.Device(
                    deviceID: delivery.deviceID, pushed: pushed == .delivered, present: delivery.present, outcome: delivery.outcome,
                    fallback: fallback))
        }
        return WakeStatus(
            wakeID: wake.id, identity: wake.identity, topic: wake.topic, deadline: Int64(wake.deadline.timeIntervalSince1970),
            devices: devices)
    }
}
