import Foundation

/// The identities devices proved they hold (`ln:<node key>`, `pk:<pubky key>`), so a push
/// addressed to an identity (a Breez Spark payment webhook names its user's key) reaches every
/// device that proved it. A device's identities are written with it: by
/// ``DeviceStore/registerDevice(platform:token:sealKey:app:extras:now:)`` and
/// ``DeviceStore/updateDevice(id:changes:now:)``.
public protocol IdentityStore: Sendable {
    /// The device's identities, sorted; empty when it proved none.
    func identities(deviceID: String) async throws -> [String]
    /// Every registered device holding `identity`, with whether its token is dead, in device-id
    /// order.
    func devices(identity: String) async throws -> [WebhookTokenResolution]
}
