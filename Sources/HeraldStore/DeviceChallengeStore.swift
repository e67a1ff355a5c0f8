import Foundation

/// Proof that a device holds the push token it registered (`registration: challenge`): a
/// one-time code is pushed to the token, and only the app that received it can post it back.
/// Until then the device's alias pushes nothing but the challenge. A challenge starts with the
/// registration, and again with a token change, in ``DeviceStore``'s transactions.
public protocol DeviceChallengeStore: Sendable {
    /// Confirms the device when `codeHash` is its open challenge's; true then (and when it was
    /// confirmed with it already). A wrong code changes nothing.
    func confirmChallenge(deviceID: String, codeHash: Data, now: Date) async throws -> Bool
    /// Whether the device has an open, unconfirmed challenge. A device registered without one
    /// (`registration: open` or `key`) never has.
    func isUnconfirmed(deviceID: String) async throws -> Bool
}
