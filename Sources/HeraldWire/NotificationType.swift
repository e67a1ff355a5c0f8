/// The `notification_type` key of a push: what the device plugin should do with it.
///
/// An open set: the Breez types are constants, and any other event or template name passes
/// through as its own type so apps can add handlers.
public struct NotificationType: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let swapUpdated: NotificationType = "swap_updated"
    public static let invoiceRequest: NotificationType = "invoice_request"
    public static let lnurlpayInfo: NotificationType = "lnurlpay_info"
    public static let lnurlpayInvoice: NotificationType = "lnurlpay_invoice"
    public static let lnurlpayVerify: NotificationType = "lnurlpay_verify"
    /// A payment arrived (breez/notify's template; also what a Breez Spark payment webhook becomes).
    public static let paymentReceived: NotificationType = "payment_received"
    /// An on-chain transaction the wallet watches confirmed.
    public static let txConfirmed: NotificationType = "tx_confirmed"
    /// Transactions to an address the wallet watches confirmed.
    public static let addressTxsConfirmed: NotificationType = "address_txs_confirmed"
    /// A Nostr Wallet Connect request (NIP-47), the whole NIP-01 event as a JSON string in `event`.
    public static let nwcEvent: NotificationType = "nwc_event"
    /// Herald's own: the one-time code that proves the app holds its push token
    /// (`registration: challenge`); the plugin posts it back by itself.
    public static let deviceChallenge: NotificationType = "herald_challenge"
}
