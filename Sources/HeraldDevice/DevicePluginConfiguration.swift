import Crypto
import Foundation
import HeraldWire

/// The plugin's settings, with the defaults of an iOS Notification Service Extension.
public struct DevicePluginConfiguration: Sendable {
    /// The time the plugin may take per push: 25 s of the extension's 30 s, leaving room to
    /// hand the content over.
    public var budget: Duration
    public var reply: ReplyPolicy
    public var lnurl: LnurlOptions
    public var wakeHandling: WakeHandling
    /// How often a swap is looked at again while the wallet progresses it.
    public var swapPollInterval: Duration
    /// Sync the wallet on a backend's `DEPOSIT_CONFIRMED` / `WITHDRAWAL_PROCESSED`, after which
    /// the balance has changed; a failure is logged and does not change the content.
    public var syncWalletOnBackendEvents: Bool
    /// How long the extension waits for the app's pong before it takes the push itself.
    public var appPingTimeout: Duration
    /// The device's X25519 private key for sealed pushes (``SealedPush``), whose public half the
    /// app registered as `seal_key`. On iOS, read it from the keychain access group the app shares
    /// with its extension; it is asked for once per push, so a key the app rotated is picked up.
    /// Nil, or a nil key: sealed pushes show their type's fallback content.
    public var sealKey: (@Sendable () -> Curve25519.KeyAgreement.PrivateKey?)?
    /// Where the plugin acknowledges a wake it handled (`POST {server}/api/v1/devices/{id}/acks`),
    /// so the waker can see it; nil: wakes are not acknowledged.
    public var wakeAcks: WakeAckTarget?

    public init(
        budget: Duration = .seconds(25),
        reply: ReplyPolicy = ReplyPolicy(),
        lnurl: LnurlOptions = LnurlOptions(),
        wakeHandling: WakeHandling = .notifyOnly,
        swapPollInterval: Duration = .seconds(2),
        syncWalletOnBackendEvents: Bool = true,
        appPingTimeout: Duration = .milliseconds(300),
        sealKey: (@Sendable () -> Curve25519.KeyAgreement.PrivateKey?)? = nil
    ) {
        self.budget = budget
        self.reply = reply
        self.lnurl = lnurl
        self.wakeHandling = wakeHandling
        self.swapPollInterval = swapPollInterval
        self.syncWalletOnBackendEvents = syncWalletOnBackendEvents
        self.appPingTimeout = appPingTimeout
        self.sealKey = sealKey
    }
}

/// The registration a plugin acknowledges wakes with: the NDS, the device id and its secret.
public struct WakeAckTarget: Sendable {
    public var server: URL
    public var deviceID: String
    /// Asked once per ack (the keychain on iOS).
    public var secret: @Sendable () -> String?

    public init(server: URL, deviceID: String, secret: @escaping @Sendable () -> String?) {
        self.server = server
        self.deviceID = deviceID
        self.secret = secret
    }

    /// The ack's request; nil without a secret.
    func request(wakeID: String, outcome: WakeAckOutcome) -> ReplyRequest? {
        guard let secret = secret(), let body = try? WireJSON.encode(WakeAck(id: wakeID, outcome: outcome)) else { return nil }
        let url = server.appendingPathComponent("api/v1/devices/\(deviceID)/acks").absoluteString
        return ReplyRequest(url: url, body: body, headers: ["Content-Type": "application/json", "Authorization": "Bearer " + secret])
    }
}

/// How the device answers LNURL-pay.
public struct LnurlOptions: Sendable, Hashable {
    /// The `text/plain` metadata entry (the Breez plugin's default).
    public var description: String
    /// LUD-12 `commentAllowed`: the longest payer comment accepted; 0 turns comments off.
    public var commentAllowed: Int

    public init(description: String = "Pay with LNURL", commentAllowed: Int = 255) {
        self.description = description
        self.commentAllowed = commentAllowed
    }
}

/// What the extension does with an LSP's wake push.
public enum WakeHandling: Sendable, Hashable {
    /// Tell the user to open the app and note the pending payment: for
    /// wallets whose node cannot run inside the extension's 24 MB.
    case notifyOnly
    /// Connect and sync the wallet and report the payment if it settled; otherwise as `notifyOnly`.
    case attemptCompletion
}
