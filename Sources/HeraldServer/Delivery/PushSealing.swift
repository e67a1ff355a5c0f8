import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// Sealing at enqueue: a push to a device that registered a seal key is sealed
/// before its size is checked and before it is stored, so neither the outbox nor the push service
/// ever holds its data in clear.
public enum PushSealing {
    /// `message` sealed to `key` and checked by its provider in the sealed form; `message` as is
    /// and checked when `key` is nil. Throws the client's error: the provider's `422` (a push that
    /// fits in clear can outgrow the limit once sealed), or `500 seal_failed`.
    ///
    /// - Parameter typeHint: The clear `sealed_type` (`notification_type`, backend `action`, wake kind).
    public static func prepare(
        _ message: PushMessage, sealKey key: SealPublicKey?, typeHint: String, for target: PushTarget, providers: PushRouter
    ) throws(APIError) -> PushMessage {
        var prepared = message
        if let key {
            do {
                prepared = try message.sealed(to: key, typeHint: typeHint)
            } catch {
                throw APIError(.internalError, "the push could not be sealed to the device's key")
            }
        }
        do throws(PushValidationError) {
            try providers.validate(prepared, for: target)
        } catch {
            guard key != nil, error.code == .payloadTooLarge else { throw APIError(error) }
            throw APIError(.payloadTooLarge, "sealed to the device's key, \(error.message)")
        }
        return prepared
    }

    /// The `seal_key` of an update: `""` removes the key (nil), anything else must parse.
    static func parseUpdate(_ text: String) throws(APIError) -> SealPublicKey? {
        text.isEmpty ? nil : try parse(text)
    }

    /// The `seal_key` of a registration or session body, or `400 invalid_seal_key`.
    static func parse(_ text: String) throws(APIError) -> SealPublicKey {
        do {
            return try SealPublicKey(base64: text)
        } catch {
            throw APIError(.invalidSealKey, error.message)
        }
    }
}
