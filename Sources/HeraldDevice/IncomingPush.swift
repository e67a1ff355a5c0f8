import Crypto
import Foundation
import HeraldWire

/// One push as the extension or service receives it, decoded into a typed notification.
///
/// Accepts the APNs `userInfo` (data keys beside `aps`), the flat FCM data map (every value a
/// string), either of those wrapped as `{"data": {…}}`, and a declarative Web Push message
/// (``DeclarativeWebPushMessage``: the data map under `notification.data`). A sealed push (``SealedPush``) is
/// opened with the device's key first; one that cannot be opened decodes as `.undecodable` with
/// its clear `sealed_type`, so the plugin shows that type's fallback content.
public struct IncomingPush: Sendable, Hashable {
    public var notification: DeviceNotification
    /// `app_data` as the webhook caller gave it.
    public var appData: String?
    /// The alert the sender put on the push, if any (APNs `aps.alert`, or a backend's `notification`).
    public var alert: Alert?

    public struct Alert: Sendable, Hashable {
        public var title: String?
        public var body: String?
        public init(title: String?, body: String?) {
            self.title = title
            self.body = body
        }
    }

    public init(notification: DeviceNotification, appData: String? = nil, alert: Alert? = nil) {
        self.notification = notification
        self.appData = appData
        self.alert = alert
    }

    /// Decodes a push from its JSON bytes; anything unreadable becomes `.undecodable`, never an error,
    /// because the extension must show something for every push.
    ///
    /// - Parameter sealKey: The device's X25519 private key, for sealed pushes.
    public init(json: Data, sealKey: Curve25519.KeyAgreement.PrivateKey? = nil) {
        guard let object = try? WireJSON.decode(JSONValue.self, from: json).objectValue else {
            self.init(notification: .undecodable(type: nil, reason: "the push is not a JSON object"))
            return
        }
        self.init(userInfo: object, sealKey: sealKey)
    }

    /// Decodes a Web Push message (RFC 8291), as a UnifiedPush distributor or a browser hands it
    /// over, opened with the subscription's P-256 private key and auth secret: its plaintext is
    /// the same data map an FCM data message carries. One that does not open becomes
    /// `.undecodable`, never an error.
    ///
    /// - Parameter sealKey: The device's X25519 private key, for a push also sealed (``SealedPush``).
    public init(
        webPush body: Data, privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data,
        sealKey: Curve25519.KeyAgreement.PrivateKey? = nil
    ) {
        do throws(WebPushMessage.Failure) {
            self.init(json: try WebPushMessage.decrypt(body, privateKey: privateKey, authSecret: authSecret), sealKey: sealKey)
        } catch {
            self.init(notification: .undecodable(type: nil, reason: "web push message not opened: \(error)"))
        }
    }

    /// Decodes a push from its top-level keys.
    public init(userInfo: [String: JSONValue], sealKey: Curve25519.KeyAgreement.PrivateKey? = nil) {
        var keys = userInfo
        // Declarative Web Push: the data map with the notification's text beside it, as a
        // plain Web Push message carries a backend alert's.
        if keys["web_push"]?.int64Value == Int64(DeclarativeWebPushMessage.marker), var notification = keys["notification"]?.objectValue,
            let data = notification.removeValue(forKey: "data")?.objectValue
        {
            keys = data.merging(["notification": .object(notification)]) { inner, _ in inner }
        }
        // A whole FCM message or a `{"data": …}` wrapper: the routing keys live under `data`.
        if !Self.hasRoutingKey(keys), let data = keys["data"]?.objectValue, Self.hasRoutingKey(data) {
            keys = data.merging(keys.filter { $0.key != "data" }) { inner, _ in inner }
        }
        let alert = Self.alert(in: keys)
        if keys[SealedPush.sealedKey] != nil {
            do throws(SealOpenError) {
                keys = try Self.opened(keys, with: sealKey)
            } catch {
                let hint = keys[SealedPush.typeKey]?.stringValue.map(NotificationType.init(rawValue:))
                self.init(notification: .undecodable(type: hint, reason: "sealed push not opened: \(error)"), alert: alert)
                return
            }
        }
        let appData = keys[PushKey.appData]?.stringValue
        self.init(notification: Self.notification(from: keys, appData: appData), appData: appData, alert: alert)
    }

    static func hasRoutingKey(_ keys: [String: JSONValue]) -> Bool {
        keys[PushKey.notificationType] != nil || keys[PushKey.action] != nil || keys[PushKey.wakeType] != nil
            || keys[SealedPush.sealedKey] != nil
    }

    /// The push's keys with the envelope replaced by the data it seals; `aps` and the rest stay.
    static func opened(
        _ keys: [String: JSONValue], with privateKey: Curve25519.KeyAgreement.PrivateKey?
    ) throws(SealOpenError) -> [String: JSONValue] {
        guard let privateKey else { throw SealOpenError(.noKey, "this device has no seal key configured") }
        var envelope: [String: String] = [:]
        for key in SealedPush.envelopeKeys {
            if let value = keys[key]?.stringValue { envelope[key] = value }
        }
        let opened = try SealedPush.open(envelope, with: privateKey)
        var result = keys.filter { !SealedPush.envelopeKeys.contains($0.key) }
        for (key, value) in opened { result[key] = .string(value) }
        return result
    }

    static func alert(in keys: [String: JSONValue]) -> Alert? {
        if let alert = keys["aps"]?["alert"] {
            if let body = alert.stringValue { return Alert(title: nil, body: body) }
            if alert.objectValue != nil {
                return Alert(title: alert["title"]?.stringValue, body: alert["body"]?.stringValue)
            }
        }
        if let notification = keys["notification"]?.objectValue {
            return Alert(title: notification["title"]?.stringValue, body: notification["body"]?.stringValue)
        }
        return nil
    }

    static func notification(from keys: [String: JSONValue], appData: String?) -> DeviceNotification {
        if let type = keys[PushKey.notificationType]?.stringValue {
            return breezNotification(type: NotificationType(rawValue: type), payload: keys[PushKey.payload], appData: appData)
        }
        if let action = keys[PushKey.action]?.stringValue {
            return .backendEvent(backendEvent(action: BackendAction(rawValue: action), keys: keys))
        }
        if let type = keys[PushKey.wakeType]?.stringValue, let kind = WakeKind(pushType: type) {
            return .wake(wakeEvent(kind: kind, fields: keys, silent: type == WakeKind.silentIncomingHtlcType || isSilent(keys)))
        }
        // An LSPS5 method Herald does not know, passed through under its own name for the app.
        if let lsps5 = lsps5Delivery(in: keys) {
            return .custom(CustomPush(type: NotificationType(rawValue: lsps5.method), payload: lsps5.params, appData: appData))
        }
        if keys[PushKey.notificationType] != nil {
            return .undecodable(type: nil, reason: "notification_type is not a string")
        }
        return .undecodable(type: nil, reason: "the push has no notification_type, action or type key")
    }

    /// A background push (`content-available` and no alert): iOS hands it to the app, not to
    /// the extension, and shows nothing (the first of an iOS wake's two pushes).
    static func isSilent(_ keys: [String: JSONValue]) -> Bool {
        guard let aps = keys["aps"]?.objectValue else { return false }
        return aps["content-available"]?.int64Value == 1 && aps["alert"] == nil
    }

    static func breezNotification(type: NotificationType, payload: JSONValue?, appData: String?) -> DeviceNotification {
        // The payload is a JSON string on the wire; an object is tolerated for hand-written pushes.
        let payloadText: String
        switch payload {
        case .string(let text): payloadText = text
        case .object: payloadText = (try? WireJSON.encodeString(payload)) ?? "{}"
        case nil, .null: payloadText = "{}"
        default: return .undecodable(type: type, reason: "notification_payload is neither a JSON string nor an object")
        }
        let bytes = Data(payloadText.utf8)
        do {
            switch type {
            case .swapUpdated: return .swapUpdated(try WireJSON.decode(SwapUpdate.self, from: bytes))
            case .invoiceRequest: return .invoiceRequest(try WireJSON.decode(InvoiceRequestPayload.self, from: bytes))
            case .lnurlpayInfo: return .lnurlPayInfo(try WireJSON.decode(LnurlPayInfoRequest.self, from: bytes))
            case .lnurlpayInvoice: return .lnurlPayInvoice(try WireJSON.decode(LnurlPayInvoiceRequest.self, from: bytes))
            case .lnurlpayVerify: return .lnurlPayVerify(try WireJSON.decode(LnurlPayVerifyRequest.self, from: bytes))
            case .paymentReceived: return .paymentReceived(try WireJSON.decode(PaymentReceived.self, from: bytes))
            case .txConfirmed: return .txConfirmed(try WireJSON.decode(TxConfirmed.self, from: bytes))
            case .addressTxsConfirmed: return .addressTxsConfirmed(try WireJSON.decode(AddressTxsConfirmed.self, from: bytes))
            case .nwcEvent: return .nwcEvent(try WireJSON.decode(NwcEvent.self, from: bytes))
            case .deviceChallenge: return .deviceChallenge(try WireJSON.decode(DeviceChallenge.self, from: bytes))
            default:
                if let kind = WakeKind(pushType: type.rawValue) {
                    let fields = (try? WireJSON.decode(JSONValue.self, from: bytes).objectValue) ?? [:]
                    return .wake(wakeEvent(kind: kind, fields: fields, silent: false))
                }
                return .custom(CustomPush(type: type, payload: payloadText, appData: appData))
            }
        } catch {
            return .undecodable(type: type, reason: "notification_payload does not match \(type.rawValue): \(error)")
        }
    }

    static func backendEvent(action: BackendAction, keys: [String: JSONValue]) -> BackendEvent {
        var fields: [String: String] = [:]
        for (key, value) in keys where !PushKey.backendEnvelope.contains(key) {
            switch value {
            case .string(let s): fields[key] = s
            case .int(let i): fields[key] = String(i)
            case .bool(let b): fields[key] = String(b)
            default: continue  // A backend's data map is flat: a nested value is not one of its fields.
            }
        }
        return BackendEvent(
            action: action,
            campaignID: keys["campaign_id"]?.stringValue,
            campaignName: keys["campaign_name"]?.stringValue,
            fields: fields
        )
    }

    static func wakeEvent(kind: WakeKind, fields: [String: JSONValue], silent: Bool) -> WakeEvent {
        let amount = fields["amount_msat"]?.int64Value.flatMap { $0 >= 0 ? UInt64($0) : nil }
        return WakeEvent(
            kind: kind, paymentHash: fields["payment_hash"]?.stringValue, amountMsat: amount, silent: silent,
            lsps5: lsps5Delivery(in: fields), wakeID: fields[WakePushKey.wakeID]?.stringValue
        )
    }

    /// The LSPS5 notification a wake push carries (``LSPS5PushKey``), if any.
    static func lsps5Delivery(in fields: [String: JSONValue]) -> LSPS5Delivery? {
        guard let method = fields[LSPS5PushKey.method]?.stringValue else { return nil }
        return LSPS5Delivery(
            method: method,
            params: fields[LSPS5PushKey.params]?.stringValue ?? "{}",
            body: fields[LSPS5PushKey.body]?.stringValue,
            timestamp: fields[LSPS5PushKey.timestamp]?.stringValue,
            signature: fields[LSPS5PushKey.signature]?.stringValue,
            nodeID: fields[LSPS5PushKey.nodeID]?.stringValue,
            verified: fields[LSPS5PushKey.verified]?.stringValue == "true"
        )
    }
}

/// The data keys the decoder routes on.
enum PushKey {
    static let notificationType = "notification_type"
    static let payload = "notification_payload"
    static let appData = "app_data"
    static let action = "action"
    /// Blocktank's routing key for LSP wake pushes.
    static let wakeType = "type"
    static let backendEnvelope: Set<String> = ["action", "campaign_id", "campaign_name", "aps", "notification", "gcm.message_id", "google.c.a.e"]
}

extension WakeKind {
    /// The `type` Blocktank puts on its silent HTLC push.
    static let silentIncomingHtlcType = "incoming_htlc_wake"

    init?(pushType: String) {
        if pushType == Self.silentIncomingHtlcType {
            self = .incomingHtlc
        } else if let kind = Self.known.first(where: { $0.rawValue == pushType }) {
            self = kind
        } else {
            return nil
        }
    }
}
