/// `PUT /api/v1/devices/{id}/live-activities/{swap_id}`: the token iOS gave the swap's started
/// activity (`Activity.pushTokenUpdates`).
public struct LiveActivityTokenBody: Codable, Sendable, Hashable {
    /// Hex, as APNs device tokens are written.
    public var pushToken: String

    public init(pushToken: String) { self.pushToken = pushToken }

    enum CodingKeys: String, CodingKey { case pushToken = "push_token" }
}

/// `live_activity` in a device's registration: what Herald needs to start a swap's Live Activity
/// by push.
public struct LiveActivityRegistration: Codable, Sendable, Hashable {
    /// The app's push-to-start token (`Activity.pushToStartTokenUpdates`, iOS 17.2+), hex.
    public var pushToStartToken: String

    public init(pushToStartToken: String) { self.pushToStartToken = pushToStartToken }

    enum CodingKeys: String, CodingKey { case pushToStartToken = "push_to_start_token" }
}
