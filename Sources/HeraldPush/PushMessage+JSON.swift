import Foundation
import HeraldWire

extension PushMessage {
    /// The message as stored with its job: the bytes `WireJSON.encode(self)` gives, written
    /// without `JSONEncoder` because every webhook stores one (see ``JSONWriter``).
    public func storedJSON() -> Data {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.data
    }

    private func write(to writer: inout JSONWriter) {
        // The synthesized coding keys in sorted order; nil members are left out, as
        // `encodeIfPresent` does.
        writer.beginObject()
        if let alert {
            writer.key("alert")
            writer.text(alert)
        }
        if let android {
            writer.key("android")
            writer.android(android)
        }
        writer.member("badge", badge)
        writer.member("category", category)
        writer.member("collapseID", collapseID)
        writer.key("data")
        writer.object(data)
        if let expiresAt {
            // JSONEncoder's default date strategy: seconds since the reference date.
            writer.key("expiresAt")
            writer.double(expiresAt.timeIntervalSinceReferenceDate)
        }
        writer.member("interruptionLevel", interruptionLevel)
        writer.member("kind", kind.rawValue)
        if let prelude {
            writer.key("prelude")
            writer.raw("[")
            for (index, push) in prelude.enumerated() {
                if index > 0 { writer.raw(",") }
                push.write(to: &writer)
            }
            writer.raw("]")
        }
        writer.member("sound", sound)
        if let verbatim {
            writer.key("verbatim")
            writer.beginObject()
            if let headers = verbatim.apnsHeaders {
                writer.key("apnsHeaders")
                writer.value(.array(headers.map { .array($0.map(JSONValue.string)) }))
            }
            writer.member("body", verbatim.body)
            writer.endObject()
        }
        writer.endObject()
    }
}

extension APNsPayload {
    /// ``render(_:)``'s bytes, written directly: `aps` sorted in among the data keys.
    static func write(_ payload: APNsPayload) -> Data {
        var writer = JSONWriter()
        writer.beginObject()
        var apsWritten = false
        for (name, value) in payload.data.sorted(by: { $0.key < $1.key }) where name != "aps" {
            if !apsWritten, "aps" < name {
                writer.aps(payload.aps)
                apsWritten = true
            }
            writer.member(name, value)
        }
        if !apsWritten { writer.aps(payload.aps) }
        writer.endObject()
        return writer.data
    }
}

extension JSONWriter {
    /// A member whose value is a string or an integer, left out when nil.
    fileprivate mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    fileprivate mutating func member(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    fileprivate mutating func text(_ text: NotificationText) {
        beginObject()
        member("body", text.body)
        member("image", text.image)
        member("title", text.title)
        endObject()
    }

    fileprivate mutating func android(_ options: PushMessage.AndroidNotification) {
        beginObject()
        member("channel_id", options.channelID)
        member("color", options.color)
        member("icon", options.icon)
        member("sound", options.sound)
        endObject()
    }

    /// The `aps` member.
    fileprivate mutating func aps(_ aps: APNsPayload.APS) {
        key("aps")
        beginObject()
        if let alert = aps.alert {
            key("alert")
            beginObject()
            member("body", alert.body)
            member("title", alert.title)
            endObject()
        }
        member("badge", aps.badge)
        member("category", aps.category)
        member("content-available", aps.contentAvailable)
        member("interruption-level", aps.interruptionLevel)
        member("mutable-content", aps.mutableContent)
        member("sound", aps.sound)
        endObject()
    }
}
