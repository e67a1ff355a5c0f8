import Foundation
import HeraldSecp256k1
import HeraldWire

extension WakeLegacyRegistration {
    /// Whether `signature`, in either encoding, is `nodeId`'s over the message.
    public func verifies() -> Bool {
        guard let node = NodeID(hex: nodeId) else { return false }
        var zbase32 = signature
        if signature.utf8.count == 130 {
            guard let bytes = [UInt8](hex: signature) else { return false }
            zbase32 = ZBase32.encode(bytes)
        }
        return LightningMessageSignature.verify(Self.message(deviceToken: deviceToken, isoTimestamp: isoTimestamp), signature: zbase32, nodeID: node)
    }
}
