import Foundation
import HeraldSecp256k1
import HeraldWire

/// A notification ready to post to a webhook: the exact body and the two LSPS5 headers.
public struct LSPS5SignedNotification: Sendable, Hashable {
    public var body: [UInt8]
    /// `x-lsps5-timestamp`.
    public var timestamp: String
    /// `x-lsps5-signature`.
    public var signature: String

    /// The headers of the `POST`, `Content-Type` included.
    public var headers: [(name: String, value: String)] {
        [
            ("Content-Type", "application/json"),
            (LSPS5Webhook.timestampHeader, timestamp),
            (LSPS5Webhook.signatureHeader, signature),
        ]
    }
}

/// The LSP's side of LSPS5: signs a notification with the node key.
public struct LSPS5Signer: Sendable {
    public let key: NodeSecretKey

    public init(key: NodeSecretKey) {
        self.key = key
    }

    /// The node id a notification delivery service will recover from these signatures.
    public var nodeID: NodeID { key.nodeID }

    /// Writes `notification`'s body and signs it with the time `date`.
    public func sign(_ notification: LSPS5Notification, at date: Date) -> LSPS5SignedNotification {
        sign(body: notification.body, timestamp: ISOTimestamp.text(date))
    }

    /// Signs a body and timestamp exactly as given.
    public func sign(body: [UInt8], timestamp: String) -> LSPS5SignedNotification {
        let message = LSPS5Webhook.signedMessage(timestamp: timestamp, body: body)
        return LSPS5SignedNotification(
            body: body, timestamp: timestamp, signature: LightningMessageSignature.sign(message, with: key))
    }
}
