import Crypto
import Foundation
import HTTPTypes
import HeraldPush
import HeraldSecp256k1
import HeraldStore
import HeraldWire
import Hummingbird

/// `POST /api/v1/breez/payments`: Breez's LNURL server for the Spark SDK tells the integrator a
/// Lightning address was paid. Checked against the domain's webhook secret, deduplicated on the
/// payment hash, and pushed as `payment_received` to every device that proved `ln:<user_pubkey>`.
struct BreezPaymentRoutes: Sendable {
    let delivery: PushDelivery
    let settings: ServerSettings
    let metrics: HeraldMetrics

    static let maxBodyBytes = 64 * 1024
    static let signature = HTTPField.Name(BreezPaymentWebhook.signatureHeader)!

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("breez/payments") { request, _ in try await receive(request) }
    }

    func receive(_ request: Request) async throws -> Response {
        guard let secret = settings.breez.webhookSecret else {
            throw APIError(.notConfigured, "Breez payment webhooks are off: set breez.webhook_secret_file")
        }
        var request = request
        let body = Array(buffer: try await Edge.readRequiredBody(&request, limit: Self.maxBodyBytes))
        guard Self.signatureMatches(request.headers[Self.signature], body: body, secret: secret) else {
            throw APIError(
                .invalidSignature, "\(BreezPaymentWebhook.signatureHeader) must be the hex HMAC-SHA256 of the raw body under the webhook secret")
        }
        let webhook: BreezPaymentWebhook
        do {
            webhook = try WireJSON.decode(BreezPaymentWebhook.self, from: Data(body))
        } catch {
            throw APIError.invalidBody(
                "expected {\"template\": \"\(BreezPaymentWebhook.sparkPaymentReceived)\", \"data\": {payment_hash, user_pubkey, …}}: \(error)")
        }
        guard webhook.template == BreezPaymentWebhook.sparkPaymentReceived else {
            throw APIError(.unsupportedTemplate, "template '\(webhook.template.prefix(64))' is not one Herald knows")
        }
        let payment = webhook.data
        guard payment.paymentHash.utf8.count == 64, payment.paymentHash.utf8.allSatisfy(\.isHex) else {
            throw APIError.invalidBody("payment_hash must be 64 hex digits")
        }
        guard let identity = ProvenIdentity("ln:" + payment.userPubkey.lowercased()) else {
            throw APIError.invalidBody("user_pubkey must be 66 hex digits of a compressed secp256k1 key")
        }
        if let sat = payment.amountSat, sat < 0 { throw APIError.invalidBody("amount_sat must not be negative") }

        let hash = payment.paymentHash.lowercased()
        // Through the directory: a device that has not confirmed its token, or whose token is
        // dead, holds the identity but is pushed nothing.
        let (devices, skipped) = try await delivery.directory.devices(identity: identity.description)
        for skip in skipped { metrics.deviceSkipped(skip.rawValue) }
        let recipients = devices.map { device in
            var recipient = DeviceDirectory.recipient(device)
            // Breez retries until it sees a 2xx: the same payment makes the same jobs.
            recipient.idempotencyKey = "breez-payment:\(hash):\(device.id)"
            return recipient
        }
        guard !recipients.isEmpty else {
            // Not an error: Breez would retry it for days, and a user with no phone registered is normal.
            return try JSONResponse.make(BreezPaymentAnswer(devices: 0, skipped: skipped.isEmpty ? nil : skipped.count), status: .accepted)
        }
        // Each device takes its own allowance: one over its share is skipped, not the payment's
        // other devices (only when all are over is the answer 429, for Breez to retry).
        let results = try await delivery.submitEach(
            Self.push(for: payment, hash: hash), type: NotificationType.paymentReceived.rawValue, to: recipients, metric: "breez_payment")
        let sent = results.compactMap { $0 }
        let overShare = results.count - sent.count
        for _ in 0..<overShare { metrics.deviceSkipped("rate_limited") }
        var response = try JSONResponse.make(
            BreezPaymentAnswer(
                devices: sent.count, jobs: sent.map(\.id), skipped: skipped.count + overShare == 0 ? nil : skipped.count + overShare))
        if sent.allSatisfy(\.duplicate) { response.headers[Edge.replayed] = "true" }
        return response
    }

    /// Compared in constant time over the decoded bytes; hex of either case is taken.
    static func signatureMatches(_ header: String?, body: [UInt8], secret: [UInt8]) -> Bool {
        guard let header, header.utf8.count == 64, let given = [UInt8](hex: header) else { return false }
        let expected = Data(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: secret)))
        return Secrets.constantTimeEqual(Data(given), expected)
    }

    /// breez/notify's `payment_received` with what the Spark server knew, and a visible alert for
    /// when no extension rewrites it (the plugin shows its own, localised, from the same fields).
    /// Collapsed by the payment, within APNs' 64 bytes: 192 bits of the hash tell payments apart.
    static func push(for payment: BreezPaymentWebhook.Payment, hash: String) throws -> PushMessage {
        let received = PaymentReceived(
            paymentHash: hash, amountSat: payment.amountSat.map { UInt64($0) }, lightningAddress: payment.lightningAddress,
            senderComment: payment.senderComment)
        let data = PushData(notificationType: .paymentReceived, notificationPayload: try WireJSON.encodeString(received))
        let alert = NotificationText(
            title: "Payment Received",
            body: payment.amountSat.map { "Received \(grouped($0)) sats" } ?? "Open your wallet to see it")
        return PushMessage(kind: .wake, data: data.dataMap, alert: alert, collapseID: "paid:\(hash.prefix(48))")
    }

    /// 50000 as "50,000".
    static func grouped(_ value: Int64) -> String {
        let digits = Array(String(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
