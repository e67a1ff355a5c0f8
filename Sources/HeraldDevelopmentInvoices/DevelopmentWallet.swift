import Crypto
import Foundation
import HeraldDevice
import HeraldWire

/// A wallet for development and demos, kept as a JSON file in a folder: it issues invoices,
/// remembers their amounts, preimages and whether they were paid, and answers like a wallet would.
/// Here, not in `HeraldDevice`, so an app's extension links the plugin without it: only
/// `herald-device` and the tests stand in for a real wallet.
///
/// Its invoices are real BOLT11 text written by the injected ``DevelopmentInvoiceIssuer``
/// (`herald-device`: regtest, `lnbcrt…`, signed with a node key kept in the same folder), with
/// the amount asked and the payment hash of a random preimage it keeps, so a payer's LNURL
/// library and any BOLT11 decoder accept them. No channel stands behind them: mark an invoice
/// paid with `settle(paymentHash:)` (`herald-device wallet settle <hash>`).
public actor DevelopmentWallet: WalletService {
    public let fileURL: URL
    public var limits: ReceiveLimits
    private let issuer: any DevelopmentInvoiceIssuer
    private var state = State()
    /// Answers Nostr Wallet Connect requests; nil: none (`herald-device` brings one, over
    /// `HeraldNostr`'s NIP-44, which this module does not link).
    private let nwc: (any DevelopmentNwcService)?

    /// How long its invoices may be paid: BOLT11's default, written out.
    public static let invoiceExpirySeconds: UInt32 = 3600

    /// The file name inside the wallet's folder.
    public static let fileName = "development-wallet.json"

    struct State: Codable {
        var invoices: [Invoice] = []
        var bolt12Invoices: [Bolt12Invoice] = []
        /// Swaps by the hash of their id, as swap pushes name them.
        var swaps: [String: WalletPayment] = [:]
        var connects = 0
    }

    /// An invoice the wallet issued.
    public struct Invoice: Codable, Sendable, Hashable {
        public var bolt11: String
        public var paymentHash: String
        public var preimage: String
        public var amountMsat: UInt64
        public var description: String
        public var descriptionHash: Bool
        public var payerNote: String?
        public var settled: Bool
        public var createdAt: Date
    }

    struct Bolt12Invoice: Codable, Hashable {
        var offer: String
        var invoiceRequest: String
        var invoice: String
    }

    public init(
        folder: URL, issuer: any DevelopmentInvoiceIssuer,
        limits: ReceiveLimits = ReceiveLimits(minMsat: 1_000, maxMsat: 1_000_000_000), nwc: (any DevelopmentNwcService)? = nil
    ) {
        self.fileURL = folder.appendingPathComponent(Self.fileName)
        self.issuer = issuer
        self.limits = limits
        self.nwc = nwc
    }

    /// Hands an NWC request to the wallet's NWC service with what it may answer: the balance
    /// (every paid invoice).
    public func handleNwcEvent(_ event: String) async throws -> Bool {
        guard let nwc else { return false }
        try load()
        let balance = state.invoices.filter(\.settled).reduce(UInt64(0)) { $0 + $1.amountMsat }
        return try await nwc.answer(event, balanceMsat: balance)
    }

    public func connect() async throws {
        try load()
        state.connects += 1
        try save()
    }

    public func receiveLimits() async throws -> ReceiveLimits { limits }

    public func receive(_ request: ReceiveRequest) async throws -> ReceivedInvoice {
        guard limits.contains(request.amountMsat) else {
            throw WalletError(.amountOutOfRange, "Amount \(request.amountMsat) msat is outside \(limits.minMsat)-\(limits.maxMsat)")
        }
        let preimage = Self.randomBytes(32)
        let paymentHash = Array(SHA256.hash(data: preimage))
        let createdAt = Date()
        let bolt11 = try issuer.invoice(
            for: InvoiceTerms(
                amountMsat: request.amountMsat, paymentHash: paymentHash, description: request.description,
                descriptionHash: request.descriptionHash, createdAt: createdAt, expirySeconds: Self.invoiceExpirySeconds
            )
        )
        let hash = paymentHash.lowercaseHex
        let invoice = Invoice(
            bolt11: bolt11,
            paymentHash: hash,
            preimage: preimage.lowercaseHex,
            amountMsat: request.amountMsat,
            description: request.description,
            descriptionHash: request.descriptionHash,
            payerNote: request.payerNote,
            settled: false,
            createdAt: createdAt
        )
        state.invoices.append(invoice)
        try save()
        return ReceivedInvoice(bolt11: invoice.bolt11, paymentHash: hash)
    }

    public func bolt12Invoice(offer: String, invoiceRequest: String) async throws -> String {
        guard offer.hasPrefix("lno"), !invoiceRequest.isEmpty else {
            throw WalletError(.invalidRequest, "Unknown offer")
        }
        let invoice = "lnidev1\(Self.randomBytes(32).lowercaseHex.prefix(48))"
        state.bolt12Invoices.append(Bolt12Invoice(offer: offer, invoiceRequest: invoiceRequest, invoice: invoice))
        try save()
        return invoice
    }

    public func payment(hash: String) async throws -> WalletPayment? {
        guard let invoice = state.invoices.first(where: { $0.paymentHash == hash }) else { return nil }
        return WalletPayment(
            paymentHash: hash, direction: .incoming, status: invoice.settled ? .complete : .pending, amountMsat: invoice.amountMsat,
            preimage: invoice.settled ? invoice.preimage : nil, invoice: invoice.bolt11
        )
    }

    public func payment(swapIDHash: String) async throws -> WalletPayment? {
        state.swaps[swapIDHash]
    }

    /// Re-reads the file, picking up invoices settled by another process.
    public func sync() async throws { try load() }

    public func disconnect() async {}

    // MARK: Development controls

    /// Marks an invoice paid; `false` if the wallet never issued it.
    @discardableResult
    public func settle(paymentHash: String) throws -> Bool {
        try load()
        guard let index = state.invoices.firstIndex(where: { $0.paymentHash == paymentHash }) else { return false }
        state.invoices[index].settled = true
        try save()
        return true
    }

    /// Records a swap's payment so a `swap_updated` push finds it.
    public func recordSwap(idHash: String, payment: WalletPayment) throws {
        try load()
        state.swaps[idHash] = payment
        try save()
    }

    /// Every invoice issued, oldest first.
    public func invoices() throws -> [Invoice] {
        try load()
        return state.invoices
    }

    /// How many times the wallet was connected.
    public func connectCount() throws -> Int {
        try load()
        return state.connects
    }

    /// `count` random bytes from the system's secure generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    func load() throws {
        guard let data = try? Data(contentsOf: fileURL) else { return }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        state = try decoder.decode(State.self, from: data)
    }

    func save() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        // It holds the invoices' preimages: owner-only.
        try OwnerOnlyFile.write(try encoder.encode(state), to: fileURL)
    }
}

/// The development wallet's Nostr Wallet Connect service (NIP-47): checks a request, answers
/// `get_info` and `get_balance` on the connection's relays. Returns whether it answered.
public protocol DevelopmentNwcService: Sendable {
    func answer(_ event: String, balanceMsat: UInt64) async throws -> Bool
}
