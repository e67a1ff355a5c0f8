import Foundation

/// What an LSPS5 (bLIP-55) webhook call carries besides its body: two headers, and the text the
/// LSP signs with its node key.
public enum LSPS5Webhook {
    /// When the LSP made the notification, as ``ISOTimestamp/text(_:)`` writes it.
    public static let timestampHeader = "x-lsps5-timestamp"
    /// The LSP's Lightning message signature (zbase32) over ``signedMessage(timestamp:body:)``.
    public static let signatureHeader = "x-lsps5-signature"

    /// The bytes the LSP signs: the fixed prefix, the timestamp header exactly as sent, and the
    /// body exactly as sent.
    public static func signedMessage(timestamp: String, body: some Sequence<UInt8>) -> [UInt8] {
        var message = Array("LSPS5: DO NOT SIGN THIS MESSAGE MANUALLY: LSP: At ".utf8)
        message.append(contentsOf: timestamp.utf8)
        message.append(contentsOf: " I notify ".utf8)
        message.append(contentsOf: body)
        return message
    }
}
