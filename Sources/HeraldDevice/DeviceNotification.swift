import Foundation
import HeraldWire

/// What a push asks the device to do, decoded from its data keys.
public enum DeviceNotification: Sendable, Hashable {
    /// `swap_updated`: let the wallet progress a swap.
    case swapUpdated(SwapUpdate)
    /// `invoice_request`: answer a BOLT12 invoice request.
    case invoiceRequest(InvoiceRequestPayload)
    /// `lnurlpay_info`: answer LNURL-pay limits and metadata.
    case lnurlPayInfo(LnurlPayInfoRequest)
    /// `lnurlpay_invoice`: answer an invoice for an amount.
    case lnurlPayInvoice(LnurlPayInvoiceRequest)
    /// `lnurlpay_verify`: answer whether a payment settled (LUD-21).
    case lnurlPayVerify(LnurlPayVerifyRequest)
    /// `payment_received`: a payment arrived; the wallet syncs and shows it.
    case paymentReceived(PaymentReceived)
    /// `tx_confirmed`: an on-chain transaction confirmed; the wallet syncs.
    case txConfirmed(TxConfirmed)
    /// `address_txs_confirmed`: transactions to a watched address confirmed; the wallet syncs.
    case addressTxsConfirmed(AddressTxsConfirmed)
    /// `nwc_event`: a Nostr Wallet Connect request the wallet answers over its relay.
    case nwcEvent(NwcEvent)
    /// `herald_challenge`: Herald asks the app to prove it holds its token (`registration:
    /// challenge`); the plugin posts the code back by itself.
    case deviceChallenge(DeviceChallenge)
    /// A wallet backend's event, routed by its `action`.
    case backendEvent(BackendEvent)
    /// An LSP's wake push: a payment or channel waits for the app.
    case wake(WakeEvent)
    /// Any other `notification_type`, for the app's custom handlers.
    case custom(CustomPush)
    /// A push the plugin cannot read; it still gets sensible content.
    case undecodable(type: NotificationType?, reason: String)

    /// The routing name, for logs, the record and the content catalogue.
    public var typeName: String {
        switch self {
        case .swapUpdated: return NotificationType.swapUpdated.rawValue
        case .invoiceRequest: return NotificationType.invoiceRequest.rawValue
        case .lnurlPayInfo: return NotificationType.lnurlpayInfo.rawValue
        case .lnurlPayInvoice: return NotificationType.lnurlpayInvoice.rawValue
        case .lnurlPayVerify: return NotificationType.lnurlpayVerify.rawValue
        case .paymentReceived: return NotificationType.paymentReceived.rawValue
        case .txConfirmed: return NotificationType.txConfirmed.rawValue
        case .addressTxsConfirmed: return NotificationType.addressTxsConfirmed.rawValue
        case .nwcEvent: return NotificationType.nwcEvent.rawValue
        case .deviceChallenge: return NotificationType.deviceChallenge.rawValue
        case .backendEvent(let event): return event.action.rawValue
        case .wake(let event): return event.kind.rawValue
        case .custom(let push): return push.type.rawValue
        case .undecodable(let type, _): return type?.rawValue ?? "unknown"
        }
    }
}

/// A wallet backend's push data: `action`, campaign fields and string custom keys.
public struct BackendEvent: Sendable, Hashable {
    public var action: BackendAction
    public var campaignID: String?
    public var campaignName: String?
    /// Every other data key, as the backend sent it (`transaction_id`, `amount`, `asset`, …).
    public var fields: [String: String]

    public init(action: BackendAction, campaignID: String? = nil, campaignName: String? = nil, fields: [String: String] = [:]) {
        self.action = action
        self.campaignID = campaignID
        self.campaignName = campaignName
        self.fields = fields
    }

    public var transactionID: String? { fields["transaction_id"] }
    /// A decimal string (`"100.00"`), never a float, as the backend sends it.
    public var amount: String? { fields["amount"] }
    public var asset: String? { fields["asset"] }
    public var network: String? { fields["network"] }
    public var destination: String? { fields["destination"] }
    public var status: String? { fields["status"] }
}

/// An LSP's wake push: what waits and, where the LSP said, for how much.
public struct WakeEvent: Sendable, Hashable {
    public var kind: WakeKind
    public var paymentHash: String?
    public var amountMsat: UInt64?
    /// A background (content-available) push, which shows nothing by itself.
    public var silent: Bool
    /// The LSPS5 notification behind the wake, when an LSP sent one through Herald.
    public var lsps5: LSPS5Delivery?
    /// The wake's id: the plugin acknowledges it (``DevicePluginConfiguration/wakeAcks``).
    public var wakeID: String?

    public init(
        kind: WakeKind, paymentHash: String? = nil, amountMsat: UInt64? = nil, silent: Bool = false,
        lsps5: LSPS5Delivery? = nil, wakeID: String? = nil
    ) {
        self.kind = kind
        self.paymentHash = paymentHash
        self.amountMsat = amountMsat
        self.silent = silent
        self.lsps5 = lsps5
        self.wakeID = wakeID
    }
}

/// An LSPS5 (bLIP-55) notification as Herald passed it on: enough for the wallet to check the
/// LSP's signature again (over ``body`` and ``timestamp``) and to know which LSP to connect to.
public struct LSPS5Delivery: Sendable, Hashable {
    /// The JSON-RPC method, e.g. `lsps5.payment_incoming`.
    public var method: String
    /// `params` as compact JSON text.
    public var params: String
    /// The body exactly as the LSP signed it.
    public var body: String?
    public var timestamp: String?
    public var signature: String?
    /// The node id the signature recovers to.
    public var nodeID: String?
    /// Whether Herald checked that node id against the one the device registered.
    public var verified: Bool

    public init(
        method: String, params: String = "{}", body: String? = nil, timestamp: String? = nil, signature: String? = nil,
        nodeID: String? = nil, verified: Bool = false
    ) {
        self.method = method
        self.params = params
        self.body = body
        self.timestamp = timestamp
        self.signature = signature
        self.nodeID = nodeID
        self.verified = verified
    }

    /// `lsps5.expiry_soon`'s `timeout`: the block height at which the LSP must close the channel.
    public var timeout: UInt32? {
        guard let value = (try? WireJSON.decode(JSONValue.self, from: Data(params.utf8)))?.objectValue?["timeout"],
            case .int(let height) = value
        else { return nil }
        return UInt32(exactly: height)
    }
}

/// A push of a type the plugin does not know, handed whole to an app's handler.
public struct CustomPush: Sendable, Hashable {
    public var type: NotificationType
    /// `notification_payload` as it arrived (a JSON string in the Breez form).
    public var payload: String
    public var appData: String?

    public init(type: NotificationType, payload: String, appData: String?) {
        self.type = type
        self.payload = payload
        self.appData = appData
    }

    /// The payload parsed as JSON, or `nil` if it is not JSON.
    public var payloadJSON: JSONValue? { try? WireJSON.decode(JSONValue.self, from: Data(payload.utf8)) }
}
