import Crypto
import Foundation
import HeraldBolt11
import HeraldNostr
import HeraldPush
import HeraldStore
import HeraldWire

/// Zaps (NIP-57) on the Lightning address, from the zap request to the receipt: checks a
/// request's relays, checks the device's invoice against it, keeps it, and once the payment is
/// reported publishes the receipt through the outbox: one job per relay, retried, expiring,
/// counted and dead-lettered like a push, published once however many instances hear of it.
struct ZapReceipts: Sendable {
    let zaps: any ZapStore
    let delivery: PushDelivery
    let settings: ServerSettings
    let now: @Sendable () -> Date

    /// How long a receipt is worth publishing; a relay down for longer gets none.
    static let receiptTTL: TimeInterval = 24 * 3600
    static let jobType = "zap_receipt"

    /// The zap request of a callback, checked as NIP-57 Appendix D asks and with relays on
    /// public addresses only (unless the operator allows others); nil without one.
    func request(_ json: String?, amount: UInt64, payURL: String) async throws -> ZapRequest? {
        guard let json, !json.isEmpty else { return nil }
        guard let zaps = settings.zaps else { throw LnurlFailure(.badRequest, "This address does not take zaps (nostr)") }
        let request: ZapRequest
        do {
            request = try ZapRequest(json: json, amount: amount, payURL: payURL)
        } catch {
            throw LnurlFailure(.badRequest, "Invalid \(error.description)")
        }
        if !zaps.allowPrivateRelays {
            for relay in request.relays {
                guard let url = URL(string: relay), let host = url.host else { continue }
                if let refusal = await EndpointAddresses.refusal(host: host, port: url.port ?? 443) {
                    throw LnurlFailure(.badRequest, "Invalid zap request relays: relay host \(refusal)")
                }
            }
        }
        return request
    }

    /// Keeps `request` for the invoice the device answered, once its description hash commits to
    /// the request; a 502 for the payer otherwise.
    func keep(_ request: ZapRequest, invoice: String, deviceID: String) async throws {
        let decoded: Bolt11Invoice
        do {
            decoded = try Bolt11Invoice.decode(invoice).invoice
        } catch {
            throw LnurlFailure(.badGateway, "The wallet answered with an invoice that does not decode")
        }
        guard decoded.descriptionHash == request.descriptionHash, let paymentHash = decoded.paymentHash else {
            throw LnurlFailure(.badGateway, "The wallet's invoice does not commit to the zap request (description hash)")
        }
        try await zaps.saveZap(
            StoredZap(paymentHash: paymentHash.lowercaseHex, deviceID: deviceID, request: request.json, bolt11: invoice, createdAt: now()))
        // Zaps are few: each new one clears those whose invoices expired long ago (through an index).
        _ = try? await zaps.purgeZaps(before: now().addingTimeInterval(-Self.keptFor))
    }

    /// How long a zap request waits for its payment to be reported.
    static let keptFor: TimeInterval = 7 * 86_400

    /// The payment of a zap's invoice was reported with `preimage`: publishes its receipt to every
    /// relay the request named. Nil when no zap was kept for `paymentHash` (a plain payment).
    func paid(paymentHash: String, preimage: String, deviceID: String, app: String) async throws -> ZapPaymentAnswer? {
        guard let zapSettings = settings.zaps else { return nil }
        guard let bytes = [UInt8](hex: preimage), bytes.count == 32,
            Array(SHA256.hash(data: bytes)).lowercaseHex == paymentHash.lowercased()
        else {
            throw APIError(.invalidPreimage, "the preimage must be 64 hex digits whose SHA-256 is the payment hash")
        }
        // Only the address's own zaps: another device's payment hash is not this one's to report.
        guard let stored = try await zaps.zap(paymentHash: paymentHash.lowercased()), stored.deviceID == deviceID else { return nil }
        let request: ZapRequest
        do {
            request = try ZapRequest(json: stored.request, amount: nil, payURL: nil)
        } catch {
            // Checked when it was kept; a row that no longer parses is not worth a receipt.
            throw APIError(.internalError, "the kept zap request no longer parses: \(error.description)")
        }
        let paidAt = now()
        let receipt = ZapReceipt.make(for: request, bolt11: stored.bolt11, preimage: bytes.lowercaseHex, paidAt: paidAt, key: zapSettings.key)
        let message = PushMessage(
            kind: .background, data: [NostrRelayProvider.eventKey: receipt.json], expiresAt: paidAt.addingTimeInterval(Self.receiptTTL))
        // One job per relay, keyed by payment and relay: a second report, from this instance or
        // another, finds the jobs already made.
        let recipients = request.relays.map { relay in
            PushDelivery.Recipient(
                target: PushTarget(destination: .nostr, token: relay, app: app), idempotencyKey: "zap:\(stored.paymentHash):\(relay)")
        }
        let results = try await delivery.submit(
            message, type: Self.jobType, to: recipients, metric: Self.jobType, chargesAllowance: false)
        return ZapPaymentAnswer(relays: recipients.count, jobIDs: results.filter { !$0.duplicate }.map(\.id))
    }
}
