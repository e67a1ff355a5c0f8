import Crypto
import Foundation
import HeraldWire

/// The push requests of Bitkit's wake gateway, byte for byte as `pushes.json` (bitkit-core
/// `wake/test_vectors`) has them: APNs headers in order with the body, FCM v1 bodies.
public enum WakePushes {
    /// One APNs request: its headers and the body.
    public struct APNsRequest: Sendable, Hashable {
        public var apns: APNsHeaders
        public var body: String

        /// The `apns-*` headers as `[name, value]` pairs, in order.
        public var headers: [[String]] { apns.fields }
    }

    /// The visible text of a topic's alerts and fallbacks. A name kept for the library's users;
    /// the type is every push's text.
    public typealias Text = NotificationText

    /// v0's fixed text: what deployed Bitkit apps show when they cannot decrypt.
    public static let legacyText = NotificationText(title: "Background Operation Request", body: "Please open your wallet.")

    /// `collapse(x)`: `x` when it is 1 to 64 visible ASCII characters (0x21 to 0x7e), else the 64
    /// hex digits of SHA-256(x). APNs takes at most 64 bytes of collapse id.
    public static func collapse(_ key: String) -> String {
        if (1...64).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) { return key }
        return Array(SHA256.hash(data: Array(key.utf8))).lowercaseHex
    }

    /// The collapse id of a producer's collapse key: hex HMAC-SHA256 keyed with the
    /// deployment's secret over `identity|topic|collapse_key`, so Apple and Google never see
    /// the producer's key (a payment hash, say) and two identities never share an id.
    public static func collapseID(secret: some ContiguousBytes, identity: String, topic: String, collapseKey: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array((identity + "|" + topic + "|" + collapseKey).utf8), using: SymmetricKey(data: secret))
        return Array(mac).lowercaseHex
    }

    // MARK: APNs

    /// A legacy wake: an alert whose `aps.alert.payload` is the v0 container.
    ///
    /// - Parameter apnsTopic: nil leaves `apns-topic` to the sender (``APNsHeaders/topic``).
    public static func apnsV0(apnsTopic: String?, apnsID: String, expiration: Int64, container: WakeContainer) -> APNsRequest {
        var writer = JSONWriter(capacity: 512)
        writer.raw(#"{"aps":{"badge":0,"sound":"ping.aiff","alert":{"#)
        writer.key("title")
        writer.string(legacyText.title)
        writer.key("body")
        writer.string(legacyText.body)
        writer.key("payload")
        container.write(to: &writer)
        writer.raw(#"},"content-available":1,"mutable-content":1}}"#)
        return APNsRequest(apns: APNsHeaders(topic: apnsTopic, id: apnsID, expiration: expiration, pushType: .alert), body: writer.text)
    }

    /// A v1 wake. Background: silent, collapsed only by the producer's key. Alert and time
    /// sensitive: the topic's text, collapsed by the producer's key or else the wake id.
    public static func apnsV1(
        apnsTopic: String?, apnsID: String, expiration: Int64, urgency: WakeUrgency, wakeID: String, topic: String,
        collapseKey: String?, text: NotificationText?, container: WakeContainer
    ) -> APNsRequest {
        var writer = JSONWriter(capacity: 768)
        let collapseID: String?
        if let level = urgency.interruptionLevel {
            let text = text ?? legacyText
            collapseID = collapse(collapseKey ?? wakeID)
            writer.raw(#"{"aps":{"alert":{"#)
            writeText(text, to: &writer)
            writer.raw(#"},"sound":"default","mutable-content":1,"interruption-level":"#)
            writer.string(level)
            writer.key("thread-id")
            writer.string(topic)
            writer.raw(#"},"wake":"#)
        } else {
            collapseID = collapseKey.map(collapse)
            writer.raw(#"{"aps":{"content-available":1},"wake":"#)
        }
        container.write(to: &writer)
        writer.endObject()
        return APNsRequest(
            apns: APNsHeaders(
                topic: apnsTopic, id: apnsID, expiration: expiration, pushType: urgency == .background ? .background : .alert,
                collapseID: collapseID),
            body: writer.text)
    }

    /// The visible alert sent when a wake was not acknowledged `handled` in time. It carries
    /// nothing to decrypt: `wake_fallback {v, id, topic}` tells the app which wake it stands for.
    public static func apnsFallback(
        apnsTopic: String?, apnsID: String, expiration: Int64, urgency: WakeUrgency, wakeID: String, topic: String,
        collapseKey: String?, text: NotificationText
    ) -> APNsRequest {
        var writer = JSONWriter(capacity: 384)
        writer.raw(#"{"aps":{"alert":{"#)
        writeText(text, to: &writer)
        writer.raw(#"},"sound":"default","interruption-level":"#)
        writer.string(urgency.interruptionLevel ?? "active")
        writer.key("thread-id")
        writer.string(topic)
        writer.raw(#"},"wake_fallback":"#)
        writeFallbackMarker(wakeID: wakeID, topic: topic, to: &writer)
        writer.endObject()
        return APNsRequest(
            apns: APNsHeaders(
                topic: apnsTopic, id: apnsID, expiration: expiration, pushType: .alert, collapseID: collapse(collapseKey ?? wakeID)),
            body: writer.text)
    }

    // MARK: FCM

    /// A legacy wake: the container's fields both in `android.data` (with the legacy text) and
    /// in `data`, as deployed apps read them.
    public static func fcmV0(token: String, ttlSeconds: Int64, container: WakeContainer) -> String {
        var writer = JSONWriter(capacity: 1024)
        writeMessageHead(token: token, to: &writer)
        writer.raw(#""android":{"priority":"high","ttl":"#)
        writer.string("\(ttlSeconds)s")
        writer.key("data")
        writer.beginObject()
        container.writeFields(to: &writer)
        writer.key("title")
        writer.string(legacyText.title)
        writer.key("message")
        writer.string(legacyText.body)
        writer.raw(#","sound":"default"}},"data":{"#)
        container.writeFields(to: &writer)
        writer.raw("}}}")
        return writer.text
    }

    /// A v1 wake: the container as the JSON string `data.wake`.
    public static func fcmV1(token: String, ttlSeconds: Int64, highPriority: Bool, collapseKey: String?, container: WakeContainer) -> String {
        var writer = JSONWriter(capacity: 768)
        writeMessageHead(token: token, to: &writer)
        writer.raw(#""android":{"priority":"#)
        writer.string(highPriority ? "high" : "normal")
        writer.key("ttl")
        writer.string("\(ttlSeconds)s")
        if let collapseKey {
            writer.key("collapse_key")
            writer.string(collapse(collapseKey))
        }
        writer.raw(#"},"data":{"wake":"#)
        writer.string(container.json)
        writer.raw("}}}")
        return writer.text
    }

    /// The fallback: an Android notification (on `channelID`, tagged so a repeat replaces it)
    /// and the marker as the JSON string `data.wake_fallback`.
    public static func fcmFallback(
        token: String, ttlSeconds: Int64, wakeID: String, topic: String, collapseKey: String?, text: NotificationText, channelID: String
    ) -> String {
        var writer = JSONWriter(capacity: 512)
        writeMessageHead(token: token, to: &writer)
        writer.raw(#""android":{"priority":"high","ttl":"#)
        writer.string("\(ttlSeconds)s")
        writer.raw(#","notification":{"#)
        writeText(text, to: &writer)
        writer.key("channel_id")
        writer.string(channelID)
        writer.key("tag")
        writer.string(collapse(collapseKey ?? wakeID))
        writer.raw(#"}},"data":{"wake_fallback":"#)
        var marker = JSONWriter(capacity: 128)
        writeFallbackMarker(wakeID: wakeID, topic: topic, to: &marker)
        writer.string(marker.text)
        writer.raw("}}}")
        return writer.text
    }

    private static func writeMessageHead(token: String, to writer: inout JSONWriter) {
        writer.raw(#"{"message":{"token":"#)
        writer.string(token)
        writer.raw(",")
    }

    private static func writeText(_ text: NotificationText, to writer: inout JSONWriter) {
        writer.key("title")
        writer.string(text.title)
        writer.key("body")
        writer.string(text.body)
    }

    static func writeFallbackMarker(wakeID: String, topic: String, to writer: inout JSONWriter) {
        writer.raw(#"{"v":1,"id":"#)
        writer.string(wakeID)
        writer.key("topic")
        writer.string(topic)
        writer.endObject()
    }
}

extension JSONWriter {
    var text: String { String(decoding: bytes, as: UTF8.self) }
}
