import Foundation

/// The texts the plugin shows, one entry per situation, with the defaults of the Breez plugin
/// and Bitkit's wake-to-complete texts, so an app moving from either shows what it showed. An
/// app overrides entries to localise or rebrand them.
///
/// Titles and bodies may hold placeholders: `{sats}`, `{amount}`, `{asset}`, `{app}`.
public struct ContentCatalogue: Sendable, Hashable {
    public var entries: [Key: NotificationContent]
    /// Fills `{app}`.
    public var appName: String

    /// A situation the plugin shows content for.
    public struct Key: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        public static let paymentReceived: Key = "payment_received"
        public static let paymentSent: Key = "payment_sent"
        public static let paymentWaitingFeeAcceptance: Key = "payment_waiting_fee_acceptance"
        public static let swapPending: Key = "swap_pending"
        public static let invoiceRequest: Key = "invoice_request"
        public static let invoiceRequestFailure: Key = "invoice_request_failure"
        public static let lnurlPayInfo: Key = "lnurl_pay_info"
        public static let lnurlPayInvoice: Key = "lnurl_pay_invoice"
        public static let lnurlPayFailure: Key = "lnurl_pay_failure"
        public static let lnurlPayVerify: Key = "lnurl_pay_verify"
        public static let lnurlPayVerifyFailure: Key = "lnurl_pay_verify_failure"
        public static let incomingHtlc: Key = "incoming_htlc"
        public static let cjitPaymentArrived: Key = "cjit_payment_arrived"
        public static let orderPaymentConfirmed: Key = "order_payment_confirmed"
        public static let mutualClose: Key = "mutual_close"
        /// LSPS5 `lsps5.liquidity_management_request`: the LSP wants liquidity back.
        public static let liquidityManagementRequest: Key = "liquidity_management_request"
        /// LSPS5 `lsps5.expiry_soon`: a contract is about to force a channel closure.
        public static let expirySoon: Key = "expiry_soon"
        public static let depositReceived: Key = "deposit_received"
        public static let depositConfirmed: Key = "deposit_confirmed"
        public static let withdrawalInitiated: Key = "withdrawal_initiated"
        public static let withdrawalProcessed: Key = "withdrawal_processed"
        /// breez/notify's `tx_confirmed` and `address_txs_confirmed`, after the wallet synced.
        public static let txConfirmed: Key = "tx_confirmed"
        /// `payment_received` when the wallet could not show the payment itself.
        public static let paymentIncoming: Key = "payment_incoming"
        /// `nwc_event`: the wallet answered a Nostr Wallet Connect request, or could not.
        public static let nwcEvent: Key = "nwc_event"
        public static let nwcEventFailure: Key = "nwc_event_failure"
        /// `herald_challenge`: the app proved it receives pushes; wakes and payments reach it now.
        public static let deviceConfirmed: Key = "device_confirmed"
        public static let backendGeneric: Key = "backend_generic"
        public static let handledByApp: Key = "handled_by_app"
        /// Anything the plugin could not make sense of: still a sensible message, never a blank one.
        public static let fallback: Key = "fallback"
    }

    /// Thread identifiers: replaceable progress messages versus results the user keeps.
    public enum Thread {
        public static let lnurlPay = "LNURL_PAY"
        public static let swapUpdated = "SWAP_UPDATED"
        public static let incomingPayment = "INCOMING_PAYMENT"
        public static let wallet = "WALLET"
    }

    /// The category Bitkit registers with an "Open Now" action.
    public static let incomingPaymentCategory = "INCOMING_PAYMENT"

    public init(entries: [Key: NotificationContent], appName: String = "the app") {
        self.entries = entries
        self.appName = appName
    }

    /// The catalogue with every default.
    public static let `default` = ContentCatalogue(entries: defaultEntries)

    /// This catalogue with some entries replaced.
    public func overriding(_ overrides: [Key: NotificationContent], appName: String? = nil) -> ContentCatalogue {
        ContentCatalogue(entries: entries.merging(overrides) { _, new in new }, appName: appName ?? self.appName)
    }

    /// This catalogue with titles and bodies replaced from a localisation table:
    /// `{"payment_received": {"title": "Zahlung erhalten", "body": "{sats} sats erhalten"}}`.
    /// A missing field keeps the default; the rest of each entry (category, level) stays.
    public func localized(from json: Data) throws -> ContentCatalogue {
        let table = try JSONDecoder().decode([String: LocalizedText].self, from: json)
        var copy = self
        for (key, text) in table {
            let key = Key(rawValue: key)
            var entry = copy.entries[key] ?? copy.content(for: .fallback)
            if let title = text.title { entry.title = title }
            if let body = text.body { entry.body = body }
            copy.entries[key] = entry
        }
        return copy
    }

    struct LocalizedText: Decodable {
        var title: String?
        var body: String?
    }

    /// The entry for a situation with placeholders filled; the fallback entry if the key is unknown.
    public func content(for key: Key, values: [String: String] = [:]) -> NotificationContent {
        var content = entries[key] ?? entries[.fallback] ?? Self.defaultEntries[.fallback] ?? NotificationContent(title: "", body: "")
        var all = values
        all["app"] = all["app"] ?? appName
        content.title = Self.fill(content.title, with: all)
        content.body = Self.fill(content.body, with: all)
        return content
    }

    static func fill(_ template: String, with values: [String: String]) -> String {
        guard template.contains("{") else { return template }
        var text = template
        for (name, value) in values {
            text = text.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return text
    }

    static let defaultEntries: [Key: NotificationContent] = [
        // The Breez plugin's defaults.
        .paymentReceived: .init(title: "Payment Received", body: "Received {sats} sats", threadIdentifier: Thread.wallet, relevanceScore: 1),
        .paymentSent: .init(title: "Payment Sent", body: "Sent {sats} sats", threadIdentifier: Thread.wallet, relevanceScore: 0.8),
        .paymentWaitingFeeAcceptance: .init(
            title: "Payment requires fee acceptance", body: "Tap to review updated fees", threadIdentifier: Thread.swapUpdated,
            interruptionLevel: .timeSensitive, relevanceScore: 0.9),
        .swapPending: .init(title: "Payment Pending", body: "Tap to complete payment", threadIdentifier: Thread.swapUpdated, relevanceScore: 0.7),
        .invoiceRequest: .init(
            title: "Fetching Invoice", body: "", threadIdentifier: Thread.lnurlPay, interruptionLevel: .passive, relevanceScore: 0.2),
        .invoiceRequestFailure: .init(
            title: "Invoice Request Failed", body: "Open {app} to receive", threadIdentifier: Thread.lnurlPay, relevanceScore: 0.6),
        .lnurlPayInfo: .init(
            title: "Retrieving Payment Information", body: "", threadIdentifier: Thread.lnurlPay, interruptionLevel: .passive, relevanceScore: 0.2),
        .lnurlPayInvoice: .init(
            title: "Fetching Invoice", body: "", threadIdentifier: Thread.lnurlPay, interruptionLevel: .passive, relevanceScore: 0.2),
        .lnurlPayFailure: .init(
            title: "Receive Payment Failed", body: "Open {app} to receive", threadIdentifier: Thread.lnurlPay, relevanceScore: 0.6),
        .lnurlPayVerify: .init(
            title: "Verifying Payment", body: "", threadIdentifier: Thread.lnurlPay, interruptionLevel: .passive, relevanceScore: 0.2),
        .lnurlPayVerifyFailure: .init(
            title: "Payment Verification Failed", body: "", threadIdentifier: Thread.lnurlPay, interruptionLevel: .passive, relevanceScore: 0.3),
        // breez/notify's other templates.
        .paymentIncoming: .init(title: "Incoming Payment", body: "Open {app} to see it", threadIdentifier: Thread.wallet, relevanceScore: 0.8),
        .txConfirmed: .init(title: "Transaction Confirmed", body: "Open {app} for details", threadIdentifier: Thread.wallet, relevanceScore: 0.6),
        .nwcEvent: .init(
            title: "Nostr Wallet Connect", body: "Request handled", threadIdentifier: Thread.wallet, interruptionLevel: .passive, relevanceScore: 0.3),
        .nwcEventFailure: .init(
            title: "Nostr Wallet Connect", body: "Open {app} to answer an app's request", threadIdentifier: Thread.wallet, relevanceScore: 0.6),
        .deviceConfirmed: .init(
            title: "Notifications On", body: "{app} can now receive payments in the background", threadIdentifier: Thread.wallet,
            interruptionLevel: .passive, relevanceScore: 0.1),
        // Bitkit's wake-to-complete messages.
        .incomingHtlc: .init(
            title: "Payment Incoming", body: "Open now to receive - funds are being held", category: incomingPaymentCategory,
            threadIdentifier: Thread.incomingPayment, interruptionLevel: .timeSensitive, relevanceScore: 1),
        .cjitPaymentArrived: .init(
            title: "Payment Incoming", body: "Open now to receive via new channel", category: incomingPaymentCategory,
            threadIdentifier: Thread.incomingPayment, interruptionLevel: .timeSensitive, relevanceScore: 1),
        .orderPaymentConfirmed: .init(
            title: "Channel Ready", body: "Open {app} to complete setup", threadIdentifier: Thread.wallet, relevanceScore: 0.7),
        .mutualClose: .init(title: "Channel Closed", body: "Funds moved to savings", threadIdentifier: Thread.wallet, relevanceScore: 0.5),
        // LSPS5 (bLIP-55) notifications with no counterpart among Bitkit's.
        .liquidityManagementRequest: .init(
            title: "Channel Update", body: "Open {app} so your Lightning service provider can adjust your channel", threadIdentifier: Thread.wallet,
            relevanceScore: 0.6),
        .expirySoon: .init(
            title: "Action Needed", body: "Open {app} now to keep your channel open", threadIdentifier: Thread.wallet,
            interruptionLevel: .timeSensitive, relevanceScore: 1),
        // A wallet backend's events, when the backend sent no text of its own.
        .depositReceived: .init(title: "Deposit Received", body: "{amount} {asset} is pending", threadIdentifier: Thread.wallet, relevanceScore: 0.8),
        .depositConfirmed: .init(
            title: "Deposit Confirmed", body: "{amount} {asset} added to your balance", threadIdentifier: Thread.wallet, relevanceScore: 0.9),
        .withdrawalInitiated: .init(
            title: "Withdrawal Requested", body: "{amount} {asset} is being sent", threadIdentifier: Thread.wallet, relevanceScore: 0.6),
        .withdrawalProcessed: .init(
            title: "Withdrawal Processed", body: "{amount} {asset} has been sent", threadIdentifier: Thread.wallet, relevanceScore: 0.7),
        .backendGeneric: .init(title: "Wallet Update", body: "Open {app} for details", threadIdentifier: Thread.wallet, relevanceScore: 0.4),
        .handledByApp: .init(
            title: "Wallet Update", body: "Handled in {app}", threadIdentifier: Thread.wallet, interruptionLevel: .passive, relevanceScore: 0.1),
        .fallback: .init(title: "Wallet Update", body: "Open {app} for details", threadIdentifier: Thread.wallet, relevanceScore: 0.4),
    ]
}
