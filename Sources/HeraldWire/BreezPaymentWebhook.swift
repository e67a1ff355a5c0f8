/// What Breez's LNURL server for the Spark SDK POSTs to an integrator's URL when a Lightning
/// address receives a payment (breez/spark-sdk `crates/breez-sdk/lnurl/src/webhook_notify.rs`):
/// `{"template": "spark_payment_received", "data": {…}}`, signed in `X-Breez-Signature`.
public struct BreezPaymentWebhook: Codable, Sendable, Hashable {
    /// The only template Breez sends today.
    public static let sparkPaymentReceived = "spark_payment_received"
    /// Lower-case hex HMAC-SHA256 of the raw body under the domain's webhook secret.
    public static let signatureHeader = "X-Breez-Signature"

    public var template: String
    public var data: Payment

    public struct Payment: Codable, Sendable, Hashable {
        public var paymentHash: String
        /// The Spark identity key of the user paid: devices proving `ln:<user_pubkey>` get the push.
        public var userPubkey: String
        public var invoice: String?
        /// Never forwarded to a phone.
        public var preimage: String?
        /// Null when Breez does not know it.
        public var amountSat: Int64?
        public var lightningAddress: String?
        public var senderComment: String?
        /// Milliseconds since the epoch when Breez queued the webhook.
        public var timestamp: Int64?

        public init(
            paymentHash: String, userPubkey: String, invoice: String? = nil, preimage: String? = nil, amountSat: Int64? = nil,
            lightningAddress: String? = nil, senderComment: String? = nil, timestamp: Int64? = nil
        ) {
            self.paymentHash = paymentHash
            self.userPubkey = userPubkey
            self.invoice = invoice
            self.preimage = preimage
            self.amountSat = amountSat
            self.lightningAddress = lightningAddress
            self.senderComment = senderComment
            self.timestamp = timestamp
        }

        enum CodingKeys: String, CodingKey {
            case paymentHash = "payment_hash"
            case userPubkey = "user_pubkey"
            case invoice, preimage
            case amountSat = "amount_sat"
            case lightningAddress = "lightning_address"
            case senderComment = "sender_comment"
            case timestamp
        }
    }

    public init(template: String = Self.sparkPaymentReceived, data: Payment) {
        self.template = template
        self.data = data
    }
}

/// The answer to a Breez payment webhook: how many devices the push went to, and their jobs.
public struct BreezPaymentAnswer: Codable, Sendable, Hashable {
    /// Devices pushed.
    public var devices: Int
    /// One job per device pushed, in device-id order; absent when none was.
    public var jobs: [String]?
    /// Devices holding the identity that were not pushed: not confirmed yet, a dead token, or
    /// over their push allowance. Absent when none.
    public var skipped: Int?
    public init(devices: Int, jobs: [String]? = nil, skipped: Int? = nil) {
        self.devices = devices
        self.jobs = jobs
        self.skipped = skipped
    }
}
