import Foundation

/// Writes and signs the invoices of a ``DevelopmentWallet``.
///
/// The wallet decides what an invoice commits to (amount, payment hash, description) and keeps
/// the preimage; the issuer turns that into BOLT11 text signed by its node key. Injected, so the
/// wallet's bookkeeping is apart from how an invoice is signed: `herald-device` and the tests
/// hand it ``Bolt11InvoiceIssuer`` (regtest invoices signed with a key kept in the wallet's folder).
public protocol DevelopmentInvoiceIssuer: Sendable {
    /// The invoice text for `terms`, signed.
    func invoice(for terms: InvoiceTerms) throws -> String
}

/// What one invoice commits to.
public struct InvoiceTerms: Sendable, Hashable {
    public var amountMsat: UInt64
    /// SHA-256 of the preimage the wallet keeps, 32 bytes.
    public var paymentHash: [UInt8]
    /// The description, or for LNURL the metadata whose SHA-256 the invoice commits to.
    public var description: String
    /// Commit to SHA-256(`description`) (BOLT11 `h`) instead of carrying it (`d`).
    public var descriptionHash: Bool
    public var createdAt: Date
    /// How long after `createdAt` the invoice may be paid.
    public var expirySeconds: UInt32

    public init(
        amountMsat: UInt64, paymentHash: [UInt8], description: String, descriptionHash: Bool, createdAt: Date,
        expirySeconds: UInt32
    ) {
        self.amountMsat = amountMsat
        self.paymentHash = paymentHash
        self.description = description
        self.descriptionHash = descriptionHash
        self.createdAt = createdAt
        self.expirySeconds = expirySeconds
    }
}
