import Foundation

/// A zap request (NIP-57) whose invoice a device issued, kept until the payment is reported so
/// the receipt can be published: by whichever instance hears of the payment.
public struct StoredZap: Sendable, Hashable {
    /// 64 lower-case hex digits: the invoice's payment hash.
    public var paymentHash: String
    public var deviceID: String
    /// The zap request as the payer sent it, byte for byte.
    public var request: String
    /// The invoice the device issued for it.
    public var bolt11: String
    public var createdAt: Date

    public init(paymentHash: String, deviceID: String, request: String, bolt11: String, createdAt: Date) {
        self.paymentHash = paymentHash
        self.deviceID = deviceID
        self.request = request
        self.bolt11 = bolt11
        self.createdAt = createdAt
    }
}

public protocol ZapStore: Sendable {
    /// Keeps a zap until its payment is reported; a second save of the same payment hash keeps
    /// the first (an invoice is issued once).
    func saveZap(_ zap: StoredZap) async throws
    func zap(paymentHash: String) async throws -> StoredZap?
    /// Forgets zaps made before `cutoff` (their invoices have long expired); returns how many.
    func purgeZaps(before cutoff: Date) async throws -> Int
}
