/// A wallet failure with a reason a payer may read (LNURL `reason`, BOLT12 `error`).
///
/// Wallets throw it for the failures they can name; any other error reaches the payer as a
/// generic reason, so internal details never leave the phone.
public struct WalletError: Error, Sendable, Hashable {
    public struct Code: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let amountOutOfRange = Code(rawValue: "amount_out_of_range")
        public static let amountMissing = Code(rawValue: "amount_missing")
        public static let notFound = Code(rawValue: "not_found")
        public static let unavailable = Code(rawValue: "unavailable")
        public static let invalidRequest = Code(rawValue: "invalid_request")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The text to send a payer for any error.
    static func payerReason(for error: any Error, otherwise generic: String) -> String {
        if let walletError = error as? WalletError { return walletError.message }
        return generic
    }
}
