import Foundation

/// What LSPS5 (bLIP-55) webhooks need kept: the LSP a device trusts to wake it, and the
/// signatures already taken, so a notification replayed within its validity is refused.
public protocol LSPS5Store: Sendable {
    /// The LSP node id (66 hex digits) the device registered; nil when it registered none. (It
    /// is written with the device, by ``DeviceStore``'s registration and update.)
    func lspNodeID(deviceID: String) async throws -> String?
    /// Remembers a notification's signature for the device until `expiresAt` and answers true;
    /// answers false, remembering nothing, when it is already remembered (a replay). Signatures
    /// past their `expiresAt` are forgotten on the way, so the memory stays bounded by what
    /// arrives within one validity window.
    func rememberLSPS5Signature(deviceID: String, signature: String, expiresAt: Date, now: Date) async throws -> Bool
    /// Forgets a remembered signature: its notification was not taken after all (nothing was
    /// committed), so sending it again must not count as a replay.
    func forgetLSPS5Signature(deviceID: String, signature: String) async throws
    /// Signatures remembered now, expired ones not yet pruned included. Counts every row: for
    /// tests and tools.
    func lsps5SignatureCount() async throws -> Int
}
