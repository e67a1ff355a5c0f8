import Foundation
import HeraldWire
import Testing

/// A swap's Live Activity on the wire: the attributes and content-state the app's ActivityKit
/// types decode, and the `aps` of the pushes that start, update and end it, byte for byte.
@Suite("Swap Live Activity wire types")
struct SwapActivityTests {
    static let attributes = SwapActivityAttributes(swapID: "0a1b2c")
    static let mempool = SwapActivityContentState(
        status: "transaction.mempool", step: 1, steps: 3, title: "Waiting for confirmation", updatedAt: 1_750_000_000)
    static let confirmed = SwapActivityContentState(
        status: "transaction.confirmed", step: 2, steps: 3, title: "Confirmed on chain", updatedAt: 1_750_000_600)
    static let completed = SwapActivityContentState(
        status: "completed", step: 3, steps: 3, title: "Swap complete", updatedAt: 1_750_001_200)

    func json(_ value: some Encodable) throws -> String {
        try WireJSON.encodeString(value)
    }

    @Test("the attributes and the content-state, byte for byte")
    func attributesAndContentState() throws {
        #expect(try json(Self.attributes) == #"{"swap_id":"0a1b2c"}"#)
        #expect(
            try json(Self.mempool)
                == #"{"status":"transaction.mempool","step":1,"steps":3,"title":"Waiting for confirmation","updated_at":1750000000}"#
        )
    }

    @Test("a start names the attributes type and carries the attributes, the state and an alert")
    func start() throws {
        let payload = LiveActivityPayload(
            aps: .start(
                timestamp: 1_750_000_000, attributes: Self.attributes, contentState: Self.mempool,
                alert: LiveActivityAlert(title: "Swap started", body: "Waiting for confirmation"), staleDate: 1_750_003_600))
        #expect(
            try json(payload)
                == #"{"aps":{"alert":{"body":"Waiting for confirmation","title":"Swap started"},"attributes":{"swap_id":"0a1b2c"},"attributes-type":"SwapActivityAttributes","content-state":{"status":"transaction.mempool","step":1,"steps":3,"title":"Waiting for confirmation","updated_at":1750000000},"event":"start","stale-date":1750003600,"timestamp":1750000000}}"#
        )
        #expect(try WireJSON.decode(LiveActivityPayload.self, from: WireJSON.encode(payload)) == payload)
    }

    @Test("an update carries the state, and nothing of a start's")
    func update() throws {
        let payload = LiveActivityPayload(aps: .update(timestamp: 1_750_000_600, contentState: Self.confirmed))
        #expect(
            try json(payload)
                == #"{"aps":{"content-state":{"status":"transaction.confirmed","step":2,"steps":3,"title":"Confirmed on chain","updated_at":1750000600},"event":"update","timestamp":1750000600}}"#
        )
        #expect(try WireJSON.decode(LiveActivityPayload.self, from: WireJSON.encode(payload)) == payload)
    }

    @Test("an end carries the final state and its dismissal date")
    func end() throws {
        let payload = LiveActivityPayload(
            aps: .end(timestamp: 1_750_001_200, contentState: Self.completed, dismissalDate: 1_750_004_800))
        #expect(
            try json(payload)
                == #"{"aps":{"content-state":{"status":"completed","step":3,"steps":3,"title":"Swap complete","updated_at":1750001200},"dismissal-date":1750004800,"event":"end","timestamp":1750001200}}"#
        )
        #expect(try WireJSON.decode(LiveActivityPayload.self, from: WireJSON.encode(payload)) == payload)
    }

    @Test("an event other than start, update or end does not decode")
    func unknownEvent() {
        let body = #"{"aps":{"content-state":{"status":"s","step":1,"steps":1,"title":"t","updated_at":1},"event":"pause","timestamp":1}}"#
        #expect(throws: (any Error).self) { try WireJSON.decode(LiveActivityPayload.self, from: Data(body.utf8)) }
        #expect(LiveActivityEvent.allCases.map(\.rawValue) == ["start", "update", "end"])
    }

    @Test("the push type and the topic of an ActivityKit push")
    func topic() {
        #expect(LiveActivityPayload.pushType == "liveactivity")
        #expect(LiveActivityPayload.topic(bundleID: "com.example.wallet") == "com.example.wallet.push-type.liveactivity")
    }

    /// The app's `SwapActivityAttributes` as docs/phone.md shows it, less the `ActivityAttributes`
    /// conformance (ActivityKit is not on Linux): ActivityKit decodes with a default `JSONDecoder`.
    struct AppSwapActivityAttributes: Codable, Hashable {
        struct ContentState: Codable, Hashable {
            var status: String
            var step: Int
            var steps: Int
            var title: String
            var updatedAt: Int

            enum CodingKeys: String, CodingKey {
                case status, step, steps, title
                case updatedAt = "updated_at"
            }
        }

        var swapId: String

        enum CodingKeys: String, CodingKey {
            case swapId = "swap_id"
        }
    }

    @Test("the app's types, as docs/phone.md declares them, decode what Herald sends with a default JSONDecoder")
    func appDecodes() throws {
        let start = try WireJSON.encode(
            LiveActivityPayload(
                aps: .start(
                    timestamp: 1_750_000_000, attributes: Self.attributes, contentState: Self.mempool,
                    alert: LiveActivityAlert(title: "t", body: "b"))))
        let aps = try #require((try JSONSerialization.jsonObject(with: start) as? [String: Any])?["aps"] as? [String: Any])
        let decoder = JSONDecoder()
        let attributes = try decoder.decode(
            AppSwapActivityAttributes.self, from: JSONSerialization.data(withJSONObject: try #require(aps["attributes"])))
        #expect(attributes.swapId == "0a1b2c")
        #expect(aps["attributes-type"] as? String == "SwapActivityAttributes")
        let state = try decoder.decode(
            AppSwapActivityAttributes.ContentState.self,
            from: JSONSerialization.data(withJSONObject: try #require(aps["content-state"])))
        #expect(
            state
                == .init(status: "transaction.mempool", step: 1, steps: 3, title: "Waiting for confirmation", updatedAt: 1_750_000_000))
    }

    @Test("a default JSONDecoder reads a Date as seconds since 2001: why updated_at is a plain integer")
    func whyNotDate() throws {
        struct WithDate: Decodable { var updatedAt: Date }
        let decoded = try JSONDecoder().decode(WithDate.self, from: Data(#"{"updatedAt":1750000000}"#.utf8))
        #expect(decoded.updatedAt != Date(timeIntervalSince1970: 1_750_000_000))
        #expect(decoded.updatedAt == Date(timeIntervalSinceReferenceDate: 1_750_000_000))
    }
}
