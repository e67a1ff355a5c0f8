import Foundation

/// The identities devices proved they hold (`ln:<node key>`, `pk:<pubky key>`), so a push
/// addressed to an identity (a Breez Spark payment webhook names its user's key) reaches every
/// device that proved it.
public protocol IdentityStore: Sendable {
    /// The device's identities, sorted; empty when it proved none.
    func identities(deviceID: String) async throws -> [String]
    /// Replaces the device's identities with `identities` (empty forgets them). The caller
    /// checked the proofs first.
    func setIdentities(deviceID: String, identities: [String], now: Date) async throws
    /// Every registered device holding `identity`, with whether its token is dead, in device-id
    /// order.
    func devices(identity: String) async throws -> [WebhookTokenResolution]
}
