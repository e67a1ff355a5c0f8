/// The `action` routing key of a wallet backend's push. An open set: a backend may send its own.
public struct BackendAction: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let none: BackendAction = "NONE"
    public static let depositReceived: BackendAction = "DEPOSIT_RECEIVED"
    public static let depositConfirmed: BackendAction = "DEPOSIT_CONFIRMED"
    public static let withdrawalInitiated: BackendAction = "WITHDRAWAL_INITIATED"
    public static let withdrawalProcessed: BackendAction = "WITHDRAWAL_PROCESSED"
}

/// What an LSP's wake push is about: the extension cannot settle a payment itself
/// within its limits, so it tells the user to open the app.
public struct WakeKind: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let incomingHtlc: WakeKind = "incomingHtlc"
    public static let cjitPaymentArrived: WakeKind = "cjitPaymentArrived"
    public static let orderPaymentConfirmed: WakeKind = "orderPaymentConfirmed"
    public static let mutualClose: WakeKind = "mutualClose"
    /// LSPS5 `lsps5.liquidity_management_request`: the LSP wants liquidity back (a close or a
    /// splice-out) and needs the wallet online to do it cooperatively.
    public static let liquidityManagementRequest: WakeKind = "liquidityManagementRequest"
    /// LSPS5 `lsps5.expiry_soon`: an HTLC or other contract is within blocks of forcing a
    /// channel closure unless the wallet comes online.
    public static let expirySoon: WakeKind = "expirySoon"

    /// The wake kinds Herald knows: the device routes a `type` or `notification_type` on them,
    /// and the server names only them in metric labels (callers choose kinds).
    public static let known: [WakeKind] = [
        .incomingHtlc, .cjitPaymentArrived, .orderPaymentConfirmed, .mutualClose, .liquidityManagementRequest, .expirySoon,
    ]
}
