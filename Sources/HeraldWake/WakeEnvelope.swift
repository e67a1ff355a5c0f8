import Foundation
import HeraldSecp256k1
import HeraldWire

/// A wake found in a push, opened: what bitkit-core's `wakeDecryptPush` returns.
public struct WakeEnvelope: Sendable, Hashable {
    /// 0 for the legacy envelope, 1 for wake v1 (and for a v1 fallback marker).
    public var version: Int
    /// The wake id to acknowledge (v1 and fallback only).
    public var id: String?
    /// The topic; `source.type` for a legacy envelope.
    public var topic: String
    public var urgency: WakeUrgency?
    /// Unix seconds after which the wake is stale (v1 only).
    public var deadline: Int64?
    /// The producer's payload as JSON (compact, keys sorted); nil when there is none.
    public var payloadJSON: String?
    /// `createdAt` of a legacy envelope.
    public var createdAt: String?
    /// A visible fallback alert: nothing was decrypted, the wake was not handled in time.
    public var fallback: Bool

    public init(
        version: Int, id: String?, topic: String, urgency: WakeUrgency? = nil, deadline: Int64? = nil, payloadJSON: String? = nil,
        createdAt: String? = nil, fallback: Bool = false
    ) {
        self.version = version
        self.id = id
        self.topic = topic
        self.urgency = urgency
        self.deadline = deadline
        self.payloadJSON = payloadJSON
        self.createdAt = createdAt
        self.fallback = fallback
    }

    // MARK: Sealing (the gateway's side)

    /// The v1 plaintext, in the gateway's field order.
    public static func v1Plaintext(id: String, topic: String, urgency: WakeUrgency, deadline: Int64, payload: JSONValue?) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.raw(#"{"v":1,"id":"#)
        writer.string(id)
        writer.key("topic")
        writer.string(topic)
        writer.key("urgency")
        writer.string(urgency.rawValue)
        writer.key("deadline")
        writer.integer(deadline)
        writer.key("payload")
        writer.value(payload ?? .null)
        writer.endObject()
        return writer.bytes
    }

    /// The legacy plaintext `{"source","type","payload","createdAt"}`: a topic `source.type`
    /// splits at its first dot.
    public static func v0Plaintext(topic: String, payload: JSONValue?, createdAt: String) -> [UInt8] {
        let parts = topic.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("source")
        writer.string(String(parts[0]))
        writer.key("type")
        writer.string(parts.count > 1 ? String(parts[1]) : "")
        writer.key("payload")
        writer.value(payload ?? .null)
        writer.key("createdAt")
        writer.string(createdAt)
        writer.endObject()
        return writer.bytes
    }

    // MARK: Opening (the device's side)

    /// Finds and opens the wake in a push: `push` is the APNs `userInfo` or the FCM data map, as
    /// JSON. Recognises the legacy `aps.alert.payload`, the legacy flat FCM data, a v1 `wake`
    /// object (APNs) or JSON string (FCM), and a `wake_fallback` marker (read without the key).
    public static func open(push: some ContiguousBytes, with key: NodeSecretKey) throws(WakeSealing.Failure) -> WakeEnvelope {
        let value: JSONValue
        do {
            value = try JSONParser.parse(push)
        } catch {
            throw WakeSealing.Failure("the push is not JSON")
        }
        guard case .object(let members) = value else { throw WakeSealing.Failure("the push is not a JSON object") }
        if let marker = members["wake_fallback"] {
            let marker = try embedded(marker)
            guard marker["v"] == .int(1), let id = marker["id"]?.stringValue, let topic = marker["topic"]?.stringValue else {
                throw WakeSealing.Failure("unsupported fallback marker")
            }
            return WakeEnvelope(version: 1, id: id, topic: topic, fallback: true)
        }
        if let wake = members["wake"] {
            return try open(WakeContainer(json: .object(try embedded(wake))), with: key)
        }
        if let payload = members["aps"]?["alert"]?["payload"] {
            return try open(WakeContainer(json: payload), with: key)
        }
        if members["cipher"] != nil {
            return try open(WakeContainer(json: value), with: key)
        }
        throw WakeSealing.Failure("the push carries no wake")
    }

    /// Opens one container.
    public static func open(_ container: WakeContainer, with key: NodeSecretKey) throws(WakeSealing.Failure) -> WakeEnvelope {
        let plaintext: [UInt8]
        do {
            plaintext = try WakeSealing.open(container.sealed, with: key, label: container.label)
        } catch let failure as WakeSealing.Failure {
            throw failure
        } catch {
            throw WakeSealing.Failure("the wake did not decrypt with this key")
        }
        guard case .object(let fields)? = try? JSONParser.parse(plaintext) else {
            throw WakeSealing.Failure("the wake's plaintext is not a JSON object")
        }
        var payload: String?
        if let value = fields["payload"], value != .null {
            var writer = JSONWriter()
            writer.value(value)
            payload = writer.text
        }
        if container.version == 0 {
            guard let source = fields["source"]?.stringValue, let type = fields["type"]?.stringValue else {
                throw WakeSealing.Failure("a legacy wake needs source and type")
            }
            return WakeEnvelope(
                version: 0, id: nil, topic: source + "." + type, payloadJSON: payload, createdAt: fields["createdAt"]?.stringValue)
        }
        guard fields["v"] == .int(1) else { throw WakeSealing.Failure("unsupported envelope version") }
        guard let id = fields["id"]?.stringValue, let topic = fields["topic"]?.stringValue,
            let urgency = fields["urgency"]?.stringValue.flatMap(WakeUrgency.init(rawValue:)), let deadline = fields["deadline"]?.int64Value
        else { throw WakeSealing.Failure("a v1 wake needs id, topic, urgency and deadline") }
        return WakeEnvelope(version: 1, id: id, topic: topic, urgency: urgency, deadline: deadline, payloadJSON: payload)
    }

    /// An object, or (FCM's data values are strings) an object written as a JSON string.
    private static func embedded(_ value: JSONValue) throws(WakeSealing.Failure) -> [String: JSONValue] {
        if case .object(let members) = value { return members }
        if case .string(let text) = value, case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) { return members }
        throw WakeSealing.Failure("the wake is neither an object nor an object's JSON")
    }
}
