import Foundation

/// Devices by id, for senders that name a device rather than hold its webhook alias (wakes, hints).
public protocol DeviceLookupStore: Sendable {
    /// The device and whether its push token is dead; nil for an unknown id.
    func resolveDevice(id: String) async throws -> WebhookTokenResolution?
}
