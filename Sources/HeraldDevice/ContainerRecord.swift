import Foundation

/// What the extension did, kept in the shared container for the app to show on open and for the
/// wake-to-complete metrics (pushes handled, fallen back or timed out, and how long each took).
public struct ContainerRecord: Codable, Sendable, Hashable {
    public var counters = Counters()
    public var handlingTime = HandlingTime()
    /// Money that arrived while the app was closed, oldest first.
    public var receipts: [Receipt] = []
    /// What waits for the app, oldest first.
    public var pending: [PendingItem] = []
    /// The LNURL `metadata` last answered, so the invoice commits to the same string.
    public var lastLnurlMetadata: String?
    public var updatedAt: Date?

    /// Lists are capped so a phone that never opens the app keeps a small file.
    public static let listLimit = 100

    public init() {}

    public struct Counters: Codable, Sendable, Hashable {
        /// Pushes the plugin started on.
        public var received = 0
        /// Pushes handled as intended.
        public var handled = 0
        /// Replies the caller accepted.
        public var replied = 0
        /// Pushes that ended in fallback content.
        public var fellBack = 0
        /// Pushes left to the running app.
        public var yieldedToApp = 0
        /// Pushes whose deadline passed before the task finished.
        public var timedOut = 0
        public init() {}

        enum CodingKeys: String, CodingKey {
            case received, handled, replied
            case fellBack = "fell_back"
            case yieldedToApp = "yielded_to_app"
            case timedOut = "timed_out"
        }
    }

    public struct HandlingTime: Codable, Sendable, Hashable {
        public var count = 0
        public var totalMilliseconds = 0
        public var maxMilliseconds = 0
        public var lastMilliseconds = 0
        public init() {}

        public var averageMilliseconds: Int { count == 0 ? 0 : totalMilliseconds / count }

        mutating func add(milliseconds: Int) {
            count += 1
            totalMilliseconds += milliseconds
            maxMilliseconds = max(maxMilliseconds, milliseconds)
            lastMilliseconds = milliseconds
        }

        enum CodingKeys: String, CodingKey {
            case count
            case totalMilliseconds = "total_ms"
            case maxMilliseconds = "max_ms"
            case lastMilliseconds = "last_ms"
        }
    }

    enum CodingKeys: String, CodingKey {
        case counters
        case handlingTime = "handling_time"
        case receipts, pending
        case lastLnurlMetadata = "last_lnurl_metadata"
        case updatedAt = "updated_at"
    }

    /// Applies what one push caused.
    public mutating func apply(_ effect: RecordEffect) {
        switch effect {
        case .received(let receipt):
            receipts.removeAll { $0.id == receipt.id }
            receipts.append(receipt)
            pending.removeAll { $0.id == receipt.id }
        case .pending(let item):
            pending.removeAll { $0.id == item.id }
            pending.append(item)
        case .resolved(let id):
            pending.removeAll { $0.id == id }
        case .lnurlMetadata(let metadata):
            lastLnurlMetadata = metadata
        }
        if receipts.count > Self.listLimit { receipts.removeFirst(receipts.count - Self.listLimit) }
        if pending.count > Self.listLimit { pending.removeFirst(pending.count - Self.listLimit) }
    }
}

/// Money received: a Lightning amount in millisatoshis, or a backend's decimal amount and asset.
public struct Receipt: Codable, Sendable, Hashable {
    /// The payment hash or the backend's transaction id.
    public var id: String
    /// A decimal string, never a float.
    public var amount: String
    /// `msat` for Lightning, else the asset (`USDC`).
    public var unit: String
    public var at: Date

    public init(id: String, amount: String, unit: String, at: Date) {
        self.id = id
        self.amount = amount
        self.unit = unit
        self.at = at
    }

    public static let millisatoshis = "msat"
}

/// Something the app should finish or show on open.
public struct PendingItem: Codable, Sendable, Hashable {
    public struct Kind: RawRepresentable, Codable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An LSP holds an HTLC until the app opens.
        public static let incomingPayment = Kind(rawValue: "incoming_payment")
        /// An invoice was issued for an LNURL payer.
        public static let issuedInvoice = Kind(rawValue: "issued_invoice")
        /// A swap waits for the app (fee acceptance, or still in flight).
        public static let swap = Kind(rawValue: "swap")
        public static let deposit = Kind(rawValue: "deposit")
        public static let withdrawal = Kind(rawValue: "withdrawal")
        /// A channel event the app should complete (a wake's `orderPaymentConfirmed`).
        public static let channel = Kind(rawValue: "channel")

        public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }
    }

    public var kind: Kind
    public var id: String
    public var amount: String?
    public var unit: String?
    public var createdAt: Date
    /// For an invoice issued to a zap (NIP-57): where to report its payment, so the server
    /// publishes the zap receipt.
    public var zapURL: String?

    public init(kind: Kind, id: String, amount: String? = nil, unit: String? = nil, createdAt: Date, zapURL: String? = nil) {
        self.kind = kind
        self.id = id
        self.amount = amount
        self.unit = unit
        self.createdAt = createdAt
        self.zapURL = zapURL
    }

    enum CodingKeys: String, CodingKey {
        case kind, id, amount, unit
        case createdAt = "created_at"
        case zapURL = "zap_url"
    }
}
