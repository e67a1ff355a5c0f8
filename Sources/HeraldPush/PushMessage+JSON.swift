import Foundation
import HeraldWire

extension PushMessage {
    /// The message as stored with its job: the bytes `WireJSON.encode(self)` gives, written
    /// without `JSONEncoder` because every webhook stores one (see ``JSONWriter``).
    public func storedJSON() -> Data {
        var writer = JSONWriter()
        // The synthesized coding keys, in sorted order; nil members are left out, as
        // `encodeIfPresent` does.
        var keys: [StaticString] = []
        if alert != nil { keys.append("alert") }
        if android != nil { keys.append("android") }
        if badge != nil { keys.append("badge") }
        if category != nil { keys.append("category") }
        if collapseID != nil { keys.append("collapseID") }
        keys.append("data")
        if expiresAt != nil { keys.append("expiresAt") }
        if interruptionLevel != nil { keys.append("interruptionLevel") }
        keys.append("kind")
        if sound != nil { keys.append("sound") }
        writer.object(keys: keys.map(\.description)) { writer, key in
            switch key {
            case "alert": writer.text(alert!)
            case "android": writer.android(android!)
            case "badge": writer.integer(badge!)
            case "category": writer.string(category!)
            case "collapseID": writer.string(collapseID!)
            case "data": writer.object(data)
            // JSONEncoder's default date strategy: seconds since the reference date.
            case "expiresAt": writer.double(expiresAt!.timeIntervalSinceReferenceDate)
            case "interruptionLevel": writer.string(interruptionLevel!)
            case "kind": writer.string(kind.rawValue)
            default: writer.string(sound!)
            }
        }
        return writer.data
    }
}

extension APNsPayload {
    /// ``render(_:)``'s bytes, written directly: `aps` sorted in among the data keys.
    static func write(_ payload: APNsPayload) -> Data {
        var writer = JSONWriter()
        let keys = (payload.data.keys.filter { $0 != "aps" } + ["aps"]).sorted()
        writer.object(keys: keys) { writer, key in
            if key == "aps" {
                writer.aps(payload.aps)
            } else {
                writer.string(payload.data[key]!)
            }
        }
        return writer.data
    }
}

extension JSONWriter {
    fileprivate mutating func text(_ text: NotificationText) {
        var keys = ["body"]
        if text.image != nil { keys.append("image") }
        keys.append("title")
        object(keys: keys) { writer, key in
            switch key {
            case "body": writer.string(text.body)
            case "image": writer.string(text.image!)
            default: writer.string(text.title)
            }
        }
    }

    fileprivate mutating func android(_ options: PushMessage.AndroidNotification) {
        let members = [
            ("channel_id", options.channelID), ("color", options.color), ("icon", options.icon),
            ("sound", options.sound),
        ].compactMap { key, value in value.map { (key, $0) } }
        object(keys: members.map(\.0)) { writer, key in
            writer.string(members.first { $0.0 == key }!.1)
        }
    }

    fileprivate mutating func aps(_ aps: APNsPayload.APS) {
        var members: [(String, (inout JSONWriter) -> Void)] = []
        if let alert = aps.alert {
            members.append(("alert", { writer in
                writer.object(keys: ["body", "title"]) { writer, key in
                    writer.string(key == "body" ? alert.body : alert.title)
                }
            }))
        }
        if let badge = aps.badge { members.append(("badge", { $0.integer(badge) })) }
        if let category = aps.category { members.append(("category", { $0.string(category) })) }
        if let flag = aps.contentAvailable { members.append(("content-available", { $0.integer(flag) })) }
        if let level = aps.interruptionLevel { members.append(("interruption-level", { $0.string(level) })) }
        if let flag = aps.mutableContent { members.append(("mutable-content", { $0.integer(flag) })) }
        if let sound = aps.sound { members.append(("sound", { $0.string(sound) })) }
        object(keys: members.map(\.0)) { writer, key in
            members.first { $0.0 == key }!.1(&writer)
        }
    }
}
