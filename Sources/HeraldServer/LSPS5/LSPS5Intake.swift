import Crypto
import Foundation
import HTTPTypes
import HeraldLSPS5
import HeraldSecp256k1
import HeraldStore
import HeraldWire
import Hummingbird

/// LSPS5 (bLIP-55) notifications on a device's webhook URL: an LSP's signed JSON-RPC
/// notification becomes a wake of that device.
///
/// The checks, in order: both headers present and the body a JSON-RPC 2.0 notification (`400`);
/// the timestamp within ``tolerance`` of Herald's clock (`400 stale_timestamp`); the signature
/// made by the device's registered LSP node, or, for a device that registered none, at least a
/// valid recoverable signature by some node (`401 invalid_signature`); the signature not taken
/// before (`409 replayed`). Only then is anything pushed.
struct LSPS5Intake: Sendable {
    let store: any LSPS5Store
    let wakes: WakeService
    let metrics: HeraldMetrics
    let now: @Sendable () -> Date

    /// bLIP-55 and LDK accept timestamps 10 minutes either way.
    static let tolerance: TimeInterval = 600

    static let timestampHeader = HTTPField.Name(LSPS5Webhook.timestampHeader)!
    static let signatureHeader = HTTPField.Name(LSPS5Webhook.signatureHeader)!

    /// A webhook call is LSPS5's when it carries either of its headers.
    static func isLSPS5(_ headers: HTTPFields) -> Bool {
        headers[timestampHeader] != nil || headers[signatureHeader] != nil
    }

    /// What was taken, for the push and the metrics.
    struct Checked {
        var notification: LSPS5Notification
        var timestamp: String
        var signedAt: Date
        var signature: String
        var signer: NodeID
        var verified: Bool

        /// What the replay memory keeps: the message, not the signature's text. An ECDSA
        /// signature has a second valid form, `(r, n−s)` with the other recovery id, so a memory
        /// of signature texts let the same notification in twice.
        func replayKey(body: [UInt8]) -> String {
            var hasher = SHA256()
            hasher.update(data: signer.bytes)
            hasher.update(data: Array(timestamp.utf8) + [0])
            hasher.update(data: body)
            return "m:" + Array(hasher.finalize()).lowercaseHex
        }
    }

    /// Checks and answers one notification addressed to `device`. `body` is exactly as received.
    func receive(body: [UInt8], headers: HTTPFields, device: Device) async throws -> Response {
        let checked: Checked
        do {
            checked = try await check(body: body, headers: headers, deviceID: device.id)
        } catch let error as APIError {
            metrics.lsps5Refused(reason: error.code.rawValue)
            throw error
        }
        let notification = checked.notification
        // Remembered before anything is pushed: of identical notifications arriving together,
        // exactly one gets past here.
        let expiresAt = checked.signedAt.addingTimeInterval(Self.tolerance + 1)
        let replayKey = checked.replayKey(body: body)
        guard
            try await store.rememberLSPS5Signature(
                deviceID: device.id, signature: replayKey, expiresAt: expiresAt, now: now())
        else {
            metrics.lsps5Refused(reason: "replayed")
            throw APIError(.replayed, "this notification (its signer, timestamp and body) was taken before; it is not pushed again")
        }
        metrics.lsps5Accepted(method: notification.method.name, verified: checked.verified)
        guard let kind = Self.wakeKind(for: notification.method) else {
            // lsps5.webhook_registered: the LSP confirms the URL works; nothing to tell the phone.
            return try JSONResponse.make(WakeAnswer(pushed: false, reason: "acknowledged"))
        }
        do {
            return try await wakes.wake(
                WakeRequest(device: device.id, kind: kind), device: device, idempotencyKey: nil,
                extraData: Self.pushData(checked, body: body)
            ).response(pushedStatus: .ok)
        } catch {
            // Nothing was committed: the same notification sent again must not count as a replay.
            try? await store.forgetLSPS5Signature(deviceID: device.id, signature: replayKey)
            throw error
        }
    }

    func check(body: [UInt8], headers: HTTPFields, deviceID: String) async throws -> Checked {
        guard let timestamp = headers[Self.timestampHeader], let signature = headers[Self.signatureHeader] else {
            throw APIError(
                .invalidNotification,
                "an LSPS5 notification needs both the \(LSPS5Webhook.timestampHeader) and \(LSPS5Webhook.signatureHeader) headers"
            )
        }
        let notification = try Self.parse(body)
        let verifier = LSPS5Verifier(tolerance: Self.tolerance, now: now)
        let signedAt: Date
        do {
            signedAt = try verifier.checkTimestamp(timestamp)
        } catch {
            throw Self.apiError(error)
        }
        let registered = try await store.lspNodeID(deviceID: deviceID).flatMap(NodeID.init(hex:))
        let message = LSPS5Webhook.signedMessage(timestamp: timestamp, body: body)
        // Without a registered node, the signer is whoever signed: bLIP-55 still asks for a valid
        // signature, and the wallet learns the node id from the push to judge for itself.
        let expected = registered ?? LightningMessageSignature.recoverNodeID(message, signature: signature)
        guard let expected else {
            throw APIError(.invalidSignature, "\(LSPS5Webhook.signatureHeader) is not a recoverable Lightning message signature")
        }
        do {
            _ = try verifier.verify(body: body, timestamp: timestamp, signature: signature, nodeID: expected)
        } catch {
            throw Self.apiError(error)
        }
        return Checked(
            notification: notification, timestamp: timestamp, signedAt: signedAt, signature: signature, signer: expected,
            verified: registered != nil
        )
    }

    /// The body as a JSON-RPC 2.0 notification whose method can name a wake kind.
    static func parse(_ body: [UInt8]) throws -> LSPS5Notification {
        do {
            _ = try JSONParser.parse(body)
        } catch {
            throw APIError.invalidJSON("the body is not valid JSON: \(error)")
        }
        let notification: LSPS5Notification
        do {
            notification = try LSPS5Notification(parsing: body)
        } catch {
            throw APIError(.invalidNotification, "the body is not an LSPS5 notification: \(error.reason)")
        }
        guard WakeRoutes.isValidKind(notification.method.name) else {
            throw APIError(
                .invalidNotification, "method must be 1 to \(WakeRoutes.maxKindBytes) letters, digits, '_', '-' or '.'"
            )
        }
        return notification
    }

    static func apiError(_ error: LSPS5VerificationError) -> APIError {
        switch error.code {
        case .staleTimestamp:
            APIError(.staleTimestamp, "\(LSPS5Webhook.timestampHeader) is more than 10 minutes from Herald's clock: \(error.message)")
        case .malformedTimestamp:
            APIError(
                .invalidNotification, "\(LSPS5Webhook.timestampHeader) must be an RFC 3339 timestamp such as 2023-05-04T10:14:23.853Z"
            )
        case .malformedBody: APIError(.invalidNotification, error.message)
        default: APIError(.invalidSignature, "the signature is not the LSP's over this timestamp and body: \(error.message)")
        }
    }

    /// The wake a method asks for; nil for one that pushes nothing. An incoming payment and a
    /// waiting onion message (a BOLT12 invoice request) both mean "open now to receive"; methods
    /// Herald does not know pass through under their own name, for the wallet to handle or ignore.
    static func wakeKind(for method: LSPS5Method) -> WakeKind? {
        switch method {
        case .webhookRegistered: nil
        case .paymentIncoming, .onionMessageIncoming: .incomingHtlc
        case .liquidityManagementRequest: .liquidityManagementRequest
        case .expirySoon: .expirySoon
        case .other(let name): WakeKind(rawValue: name)
        }
    }

    /// What the pushes carry so the wallet can check the notification again (``LSPS5PushKey``).
    static func pushData(_ checked: Checked, body: [UInt8]) -> [String: String] {
        var params = JSONWriter(capacity: 32)
        params.object(checked.notification.params)
        return [
            LSPS5PushKey.method: checked.notification.method.name,
            LSPS5PushKey.params: String(decoding: params.bytes, as: UTF8.self),
            LSPS5PushKey.body: String(decoding: body, as: UTF8.self),
            LSPS5PushKey.timestamp: checked.timestamp,
            LSPS5PushKey.signature: checked.signature,
            LSPS5PushKey.nodeID: checked.signer.hex,
            LSPS5PushKey.verified: checked.verified ? "true" : "false",
        ]
    }
}
