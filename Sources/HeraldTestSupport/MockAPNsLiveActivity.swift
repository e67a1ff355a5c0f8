import Foundation

/// What the APNs look-alike holds an ActivityKit push (`apns-push-type: liveactivity`) to, past
/// the rules of every push: the `aps` that ActivityKit reads, as Apple's "Starting and updating
/// Live Activities with ActivityKit push notifications" describes it.
///
/// - `timestamp` (whole seconds) and `event` (`start`, `update` or `end`) always;
/// - `content-state` (an object) on a start and an update;
/// - `attributes-type`, `attributes` (an object) and `alert` on a start;
/// - `dismissal-date` on an end alone; `stale-date` and `dismissal-date` in whole seconds.
///
/// Apple's list of error reasons has none for such a payload: ActivityKit, not APNs, finds the
/// fault, and the push is lost on the device. The look-alike answers 400 `BadPayload`, the reason
/// of its own it already gives a body without an `aps` object, so a sender's mistake fails a test
/// rather than passing unseen.
enum LiveActivityRules {
    /// What the app's bundle id is followed by in an ActivityKit push's `apns-topic`.
    static let topicSuffix = ".push-type.liveactivity"
    static let events: Set<String> = ["start", "update", "end"]
    static let badPayload = MockAPNsAnswer(status: 400, reason: "BadPayload")

    /// The refusal for `body` (already known to be a JSON object with an `aps` object), or nil.
    static func check(_ body: Data) -> MockAPNsAnswer? {
        // The typed fields through JSONDecoder, which refuses `1.5` or `true` for an integer as
        // JSONSerialization's numbers would not; the objects' presence through JSONSerialization.
        guard let typed = try? JSONDecoder().decode(Envelope.self, from: body),
            let aps = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["aps"] as? [String: Any]
        else { return badPayload }
        let event = typed.aps.event
        guard events.contains(event) else { return badPayload }
        if let state = aps["content-state"], !(state is [String: Any]) { return badPayload }
        if event != "end", aps["content-state"] == nil { return badPayload }
        if event != "end", aps["dismissal-date"] != nil { return badPayload }
        if event == "start" {
            guard typed.aps.attributesType != nil, aps["attributes"] is [String: Any], aps["alert"] is [String: Any] || aps["alert"] is String
            else { return badPayload }
        }
        return nil
    }

    private struct Envelope: Decodable {
        var aps: APS

        struct APS: Decodable {
            var timestamp: Int
            var event: String
            var staleDate: Int?
            var dismissalDate: Int?
            var attributesType: String?

            enum CodingKeys: String, CodingKey {
                case timestamp, event
                case staleDate = "stale-date"
                case dismissalDate = "dismissal-date"
                case attributesType = "attributes-type"
            }
        }
    }
}
