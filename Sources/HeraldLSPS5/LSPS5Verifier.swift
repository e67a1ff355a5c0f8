import Foundation
import HeraldSecp256k1
import HeraldWire

/// Why a webhook call is not a notification from the expected LSP.
public struct LSPS5VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable reason, for callers to switch on and for metrics labels.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// `x-lsps5-timestamp` is not an RFC 3339 timestamp.
        public static let malformedTimestamp = Code("malformed_timestamp")
        /// The timestamp is further from the service's clock than the tolerance allows.
        public static let staleTimestamp = Code("stale_timestamp")
        /// `x-lsps5-signature` is not a 65-byte zbase32 recoverable signature.
        public static let malformedSignature = Code("malformed_signature")
        /// The signature is valid but made by another key than the expected node's.
        public static let wrongSigner = Code("wrong_signer")
        /// The body is not a JSON-RPC 2.0 notification.
        public static let malformedBody = Code("malformed_body")
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

/// The notification delivery service's side of LSPS5: checks a webhook call's timestamp and
/// signature against the LSP node id the webhook URL names.
public struct LSPS5Verifier: Sendable {
    /// How far the LSP's timestamp may be from `now()`, either way; bLIP-55 / LDK use 10 minutes.
    public var tolerance: TimeInterval
    /// The service's clock: a parameter so tests can move it.
    public var now: @Sendable () -> Date

    public init(tolerance: TimeInterval = 600, now: @escaping @Sendable () -> Date = { Date() }) {
        self.tolerance = tolerance
        self.now = now
    }

    /// Reads `x-lsps5-timestamp` and checks it is within ``tolerance`` of `now()`: the moment
    /// the LSP signed at.
    public func checkTimestamp(_ timestamp: String) throws(LSPS5VerificationError) -> Date {
        guard let signedAt = ISOTimestamp.parse(timestamp) else {
            throw LSPS5VerificationError(code: .malformedTimestamp, message: "not an RFC 3339 timestamp")
        }
        // In whole milliseconds, the timestamp's precision: a parsed `.853` is not exactly 0.853.
        let skew = (signedAt.timeIntervalSince(now()) * 1000).rounded() / 1000
        guard abs(skew) <= tolerance else {
            throw LSPS5VerificationError(
                code: .staleTimestamp, message: "timestamp is \(Int(skew.rounded())) s from the service's clock")
        }
        return signedAt
    }

    /// Checks the call and returns its notification. `body` must be the request body exactly as
    /// received: the signature covers those bytes, not a re-encoding of them.
    public func verify(
        body: [UInt8], timestamp: String, signature: String, nodeID: NodeID
    ) throws(LSPS5VerificationError) -> LSPS5Notification {
        _ = try checkTimestamp(timestamp)
        let message = LSPS5Webhook.signedMessage(timestamp: timestamp, body: body)
        guard let signer = LightningMessageSignature.recoverNodeID(message, signature: signature) else {
            throw LSPS5VerificationError(code: .malformedSignature, message: "not a recoverable signature")
        }
        guard signer == nodeID else {
            throw LSPS5VerificationError(code: .wrongSigner, message: "signed by \(signer), not \(nodeID)")
        }
        do {
            return try LSPS5Notification(parsing: body)
        } catch {
            throw LSPS5VerificationError(code: .malformedBody, message: error.reason)
        }
    }
}
