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
}
