/// The wallet the plugin drives: a Lightning SDK (Breez, LDK, …) behind the few calls a push needs.
///
/// Calls may block or hang; the plugin bounds every call with its deadline, so an
/// implementation need not add timeouts of its own.
public protocol WalletService: Sendable {
    /// Starts the wallet (opens its store, connects to its service). Called at most once per push.
    func connect() async throws
    /// What the wallet can receive now.
    func receiveLimits() async throws -> ReceiveLimits
    /// Creates a BOLT11 invoice; with `descriptionHash` the invoice commits to SHA-256 of `description`.
    func receive(_ request: ReceiveRequest) async throws -> ReceivedInvoice
    /// Answers a BOLT12 invoice request for one of the wallet's offers.
    func bolt12Invoice(offer: String, invoiceRequest: String) async throws -> String
    /// The payment with this payment hash, or `nil` if the wallet knows none.
    func payment(hash: String) async throws -> WalletPayment?
    /// The payment of the swap whose id hashes to `swapIDHash` (Breez sends the hash, not the id).
    func payment(swapIDHash: String) async throws -> WalletPayment?
    /// Lets the wallet catch up with its service, progressing swaps and claiming payments.
    func sync() async throws
    /// Stops the wallet; the plugin calls it after the content is decided.
    func disconnect() async
    /// Answers a Nostr Wallet Connect request (NIP-47): `event` is the whole NIP-01 event as the
    /// relay sent it, for the wallet's NWC service to check, decrypt, execute and answer on its
    /// relay. Returns false when the wallet has no NWC service (the default): the plugin shows the
    /// type's fallback text.
    func handleNwcEvent(_ event: String) async throws -> Bool
}

extension WalletService {
    public func handleNwcEvent(_ event: String) async throws -> Bool { false }
}

/// Receive limits in millisatoshis.
public struct ReceiveLimits: Sendable, Hashable, Codable {
    public var minMsat: UInt64
    public var maxMsat: UInt64
    public init(minMsat: UInt64, maxMsat: UInt64) {
        self.minMsat = minMsat
        self.maxMsat = maxMsat
    }
    public func contains(_ msat: UInt64) -> Bool { msat >= minMsat && msat <= maxMsat }
}

/// An invoice to create.
public struct ReceiveRequest: Sendable, Hashable {
    public var amountMsat: UInt64
    /// The description, or for LNURL the metadata string whose hash goes into the invoice.
    public var description: String
    /// Commit to SHA-256(`description`) instead of carrying it (LUD-06 requires this).
    public var descriptionHash: Bool
    /// A LUD-12 comment from the payer, kept with the payment.
    public var payerNote: String?

    public init(amountMsat: UInt64, description: String, descriptionHash: Bool, payerNote: String? = nil) {
        self.amountMsat = amountMsat
        self.description = description
        self.descriptionHash = descriptionHash
        self.payerNote = payerNote
    }
}

/// A created invoice.
public struct ReceivedInvoice: Sendable, Hashable, Codable {
    public var bolt11: String
    public var paymentHash: String
    public init(bolt11: String, paymentHash: String) {
        self.bolt11 = bolt11
        self.paymentHash = paymentHash
    }
}

/// A payment as the wallet sees it.
public struct WalletPayment: Sendable, Hashable, Codable {
    public enum Direction: String, Sendable, Hashable, Codable { case incoming, outgoing }
    public enum Status: String, Sendable, Hashable, Codable {
        /// Nothing final yet.
        case pending
        /// Paid; the claim is broadcast but not confirmed. Counts as settled for the payer (LUD-21).
        case claimed
        case complete
        case failed
        /// A swap whose fees changed needs the user's consent.
        case waitingFeeAcceptance = "waiting_fee_acceptance"
    }

    public var paymentHash: String?
    public var direction: Direction
    public var status: Status
    public var amountMsat: UInt64
    public var preimage: String?
    /// The BOLT11 invoice the payment is for.
    public var invoice: String?

    public init(
        paymentHash: String?, direction: Direction, status: Status, amountMsat: UInt64, preimage: String? = nil,
        invoice: String? = nil
    ) {
        self.paymentHash = paymentHash
        self.direction = direction
        self.status = status
        self.amountMsat = amountMsat
        self.preimage = preimage
        self.invoice = invoice
    }

    /// Whether the payer may consider it paid.
    public var isSettled: Bool { status == .complete || status == .claimed }
    public var amountSat: UInt64 { amountMsat / 1000 }
}
