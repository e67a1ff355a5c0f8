// The typed `data` of the Breez webhook events and templates, as the NDS receives them.

/// `swap.update`: a swap changed status; the device should let its SDK progress it.
public struct SwapUpdate: Codable, Hashable, Sendable {
    /// The hashed id of the swap.
    public var id: String
    public var status: String
    public init(id: String, status: String) {
        self.id = id
        self.status = status
    }
}

/// `invoice.request`: a payer asked a BOLT12 offer for an invoice.
public struct InvoiceRequestEvent: Codable, Hashable, Sendable {
    public var offer: String
    public var invoiceRequest: String
    public init(offer: String, invoiceRequest: String) {
        self.offer = offer
        self.invoiceRequest = invoiceRequest
    }
}

/// What the device receives for an `invoice.request`: the request renamed to
/// `invoice_request` and the URL to answer on.
public struct InvoiceRequestPayload: Codable, Hashable, Sendable {
    public var offer: String
    public var invoiceRequest: String
    public var replyURL: String?
    public init(offer: String, invoiceRequest: String, replyURL: String?) {
        self.offer = offer
        self.invoiceRequest = invoiceRequest
        self.replyURL = replyURL
    }
    enum CodingKeys: String, CodingKey {
        case offer
        case invoiceRequest = "invoice_request"
        case replyURL = "reply_url"
    }
}

/// `lnurlpay_info`: a payer fetched the LNURL-pay parameters.
public struct LnurlPayInfoRequest: Codable, Hashable, Sendable {
    public var callbackURL: String
    public var replyURL: String
    /// The Lightning address (`alice@example.com`), for the `text/identifier` metadata entry.
    public var identifier: String?
    public init(callbackURL: String, replyURL: String, identifier: String? = nil) {
        self.callbackURL = callbackURL
        self.replyURL = replyURL
        self.identifier = identifier
    }
    enum CodingKeys: String, CodingKey {
        case callbackURL = "callback_url"
        case replyURL = "reply_url"
        case identifier
    }
}

/// `lnurlpay_invoice`: a payer chose an amount and wants an invoice.
public struct LnurlPayInvoiceRequest: Codable, Hashable, Sendable {
    /// Millisatoshis, within the limits the device gave.
    public var amount: UInt64
    public var replyURL: String
    /// LUD-21 verify URL holding the literal `{payment_hash}` placeholder.
    public var verifyURL: String?
    /// LUD-12 comment from the payer.
    public var comment: String?
    /// The Lightning address, so the device rebuilds the same `metadata` (with `text/identifier`)
    /// that the payer got in the info step: the invoice's description hash must commit to it.
    public var identifier: String?
    /// The exact `metadata` string the payer got, when the service kept it; preferred over rebuilding.
    public var metadata: String?
    /// A NIP-57 zap request, as the payer sent it: the invoice's description hash commits to it
    /// (SHA-256 of this exact string) instead of to `metadata`.
    public var nostr: String?
    /// Where the device reports the zap's payment (``ZapPaymentReport``), with the literal
    /// `{payment_hash}` placeholder: the server then publishes the zap receipt.
    public var zapURL: String?
    public init(
        amount: UInt64, replyURL: String, verifyURL: String? = nil, comment: String? = nil,
        identifier: String? = nil, metadata: String? = nil, nostr: String? = nil, zapURL: String? = nil
    ) {
        self.amount = amount
        self.replyURL = replyURL
        self.verifyURL = verifyURL
        self.comment = comment
        self.identifier = identifier
        self.metadata = metadata
        self.nostr = nostr
        self.zapURL = zapURL
    }
    enum CodingKeys: String, CodingKey {
        case amount
        case replyURL = "reply_url"
        case verifyURL = "verify_url"
        case comment
        case identifier
        case metadata
        case nostr
        case zapURL = "zap_url"
    }
}

/// `lnurlpay_verify`: a payer asks whether its payment settled (LUD-21).
public struct LnurlPayVerifyRequest: Codable, Hashable, Sendable {
    public var paymentHash: String
    public var replyURL: String
    public init(paymentHash: String, replyURL: String) {
        self.paymentHash = paymentHash
        self.replyURL = replyURL
    }
    enum CodingKeys: String, CodingKey {
        case paymentHash = "payment_hash"
        case replyURL = "reply_url"
    }
}

/// `payment_received`: a payment arrived for the wallet. breez/notify sends `payment_hash` only;
/// a Breez Spark payment webhook (`POST /api/v1/breez/payments`) adds what its LNURL server knew.
public struct PaymentReceived: Codable, Hashable, Sendable {
    public var paymentHash: String
    public var amountSat: UInt64?
    public var lightningAddress: String?
    /// The payer's LUD-12 comment.
    public var senderComment: String?
    public init(paymentHash: String, amountSat: UInt64? = nil, lightningAddress: String? = nil, senderComment: String? = nil) {
        self.paymentHash = paymentHash
        self.amountSat = amountSat
        self.lightningAddress = lightningAddress
        self.senderComment = senderComment
    }
    enum CodingKeys: String, CodingKey {
        case paymentHash = "payment_hash"
        case amountSat = "amount_sat"
        case lightningAddress = "lightning_address"
        case senderComment = "sender_comment"
    }
}

/// `tx_confirmed`: an on-chain transaction the wallet waits for confirmed.
public struct TxConfirmed: Codable, Hashable, Sendable {
    public var txID: String
    public init(txID: String) { self.txID = txID }
    enum CodingKeys: String, CodingKey { case txID = "tx_id" }
}

/// `address_txs_confirmed`: transactions to an address the wallet watches confirmed.
public struct AddressTxsConfirmed: Codable, Hashable, Sendable {
    public var address: String
    public init(address: String) { self.address = address }
}

/// `nwc_event`: a Nostr Wallet Connect request (NIP-47) for the wallet to answer over its relay.
public struct NwcEvent: Codable, Hashable, Sendable {
    /// The whole NIP-01 event, as the relay sent it: the wallet checks and decrypts it itself.
    public var event: String
    public init(event: String) { self.event = event }
}
