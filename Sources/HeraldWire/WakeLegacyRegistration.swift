import Foundation

/// `POST /api/device`, the registration deployed Bitkit apps send (bitkit-notification-server):
/// the node signs `"bitkit-notifications" + deviceToken + isoTimestamp` as a Lightning signed
/// message, and `features` are the topics. Such a device gets v0 envelopes.
public struct WakeLegacyRegistration: Codable, Sendable, Hashable {
    public var deviceToken: String
    public var features: [String]
    public var isProduction: Bool
    public var isoTimestamp: String
    public var nodeId: String
    /// The device's compressed secp256k1 key, the v0 envelopes' recipient.
    public var publicKey: String
    /// zbase32 (104 characters) or hex (130 digits) of the 65-byte recoverable signature.
    public var signature: String

    public init(
        deviceToken: String, features: [String], isProduction: Bool, isoTimestamp: String, nodeId: String, publicKey: String,
        signature: String
    ) {
        self.deviceToken = deviceToken
        self.features = features
        self.isProduction = isProduction
        self.isoTimestamp = isoTimestamp
        self.nodeId = nodeId
        self.publicKey = publicKey
        self.signature = signature
    }

    public static func message(deviceToken: String, isoTimestamp: String) -> String {
        "bitkit-notifications" + deviceToken + isoTimestamp
    }
}
