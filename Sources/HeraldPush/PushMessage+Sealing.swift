import Foundation
import HeraldWire

extension PushMessage {
    /// This push with its data replaced by the ``SealedPush`` envelope for `key`; kind, alert,
    /// expiry and the Android options stay, as the push services need them in clear. A collapse
    /// id stays too, made opaque (``SealedPush/opaqueCollapseID(_:for:)``): it can name a swap.
    ///
    /// - Parameter typeHint: The clear `sealed_type`: the `notification_type`, backend `action`
    ///   or wake kind, so a device that cannot open the push still shows that type's fallback.
    public func sealed(to key: SealPublicKey, typeHint: String) throws -> PushMessage {
        var message = self
        message.data = try SealedPush.seal(data, to: key, typeHint: typeHint)
        message.collapseID = collapseID.map { SealedPush.opaqueCollapseID($0, for: key) }
        return message
    }
}
