/// `POST /nwc/{pubkey}`, breez-lnurl's NWC registration: watch `walletServicePubkey`'s requests
/// from `appPubkey` on `relays` and wake the wallet through `webhookUrl`. Signed, as an LN signed
/// message over ``signedText``, by the node key in the path. The keys are spelled as breez-lnurl's
/// clients send them (`webhookUrl`, not `webhook_url`).
public struct NwcRegistrationRequest: Codable, Sendable, Hashable {
    public var webhookUrl: String
    /// x-only, 64 lower-case hex digits.
    public var walletServicePubkey: String
    /// x-only, 64 lower-case hex digits.
    public var appPubkey: String
    public var relays: [String]
    public var signature: String

    public init(webhookUrl: String, walletServicePubkey: String, appPubkey: String, relays: [String], signature: String) {
        self.webhookUrl = webhookUrl
        self.walletServicePubkey = walletServicePubkey
        self.appPubkey = appPubkey
        self.relays = relays
        self.signature = signature
    }

    /// What ``signature`` must sign: `<webhookUrl>-<walletServicePubkey>-<appPubkey>-[<relays>]`,
    /// the relays as Go's `%v` prints a `[]string` (brackets around the items joined by single spaces).
    public var signedText: String {
        "\(webhookUrl)-\(walletServicePubkey)-\(appPubkey)-[\(relays.joined(separator: " "))]"
    }
}

/// `DELETE /nwc/{pubkey}`, breez-lnurl's unregistration: signed by the node key in the path over
/// ``signedText``, `time` in Unix seconds.
public struct NwcUnregistrationRequest: Codable, Sendable, Hashable {
    public var time: Int64
    public var walletServicePubkey: String
    public var appPubkey: String
    public var signature: String

    public init(time: Int64, walletServicePubkey: String, appPubkey: String, signature: String) {
        self.time = time
        self.walletServicePubkey = walletServicePubkey
        self.appPubkey = appPubkey
        self.signature = signature
    }

    /// What ``signature`` must sign: `<time>-<walletServicePubkey>-<appPubkey>`.
    public var signedText: String { "\(time)-\(walletServicePubkey)-\(appPubkey)" }
}
