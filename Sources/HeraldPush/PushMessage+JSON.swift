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

    /// A message as stored with its job, read without `JSONDecoder`: every job claimed from the
    /// store is read so (retries, a backlog after a restart, intake past the dispatcher's memory
    /// under load). `herald-bench --micro`: 2.2 µs a message here, 9.1 µs with `JSONDecoder`.
    /// A shape ``storedJSON()`` never writes (a number where a string goes, say) is left to
    /// `WireJSON.decode`, so the result, or the error, is always the one it gives.
    public init(storedJSON data: Data) throws {
        let parsed = try JSONParser.parse(data)
        if let message = try? Self(stored: parsed) {
            self = message
        } else {
            self = try WireJSON.decode(PushMessage.self, parsed: parsed, from: data)
        }
    }

    /// The members the synthesized `Decodable` reads, in the shapes ``storedJSON()`` writes them;
    /// unknown members are ignored, as it ignores them. Internal for the tests that check every
    /// stored shape takes this way.
    init(stored value: JSONValue) throws(StoredShapeMismatch) {
        let members = try value.storedObject()
        guard let kind = try Kind(rawValue: members["kind"].storedString() ?? "") else { throw StoredShapeMismatch() }
        self.init(kind: kind, data: try members["data"].storedStringMap())
        if let alert = try members["alert"].storedOptionalObject() {
            guard let title = try alert["title"].storedString(), let body = try alert["body"].storedString() else {
                throw StoredShapeMismatch()
            }
            self.alert = NotificationText(title: title, body: body, image: try alert["image"].storedString())
        }
        sound = try members["sound"].storedString()
        switch members["badge"] {
        case .int(let badge)?:
            guard let exact = Int(exactly: badge) else { throw StoredShapeMismatch() }
            self.badge = exact
        case nil, .null?: break
        default: throw StoredShapeMismatch()
        }
        category = try members["category"].storedString()
        interruptionLevel = try members["interruptionLevel"].storedString()
        collapseID = try members["collapseID"].storedString()
        switch members["expiresAt"] {
        case .int(let seconds)?: expiresAt = Date(timeIntervalSinceReferenceDate: Double(seconds))
        case .double(let seconds)?: expiresAt = Date(timeIntervalSinceReferenceDate: seconds)
        case nil, .null?: break
        default: throw StoredShapeMismatch()
        }
        if let android = try members["android"].storedOptionalObject() {
            self.android = AndroidNotification(
                channelID: try android["channel_id"].storedString(), sound: try android["sound"].storedString(),
                color: try android["color"].storedString(), icon: try android["icon"].storedString())
        }
        switch members["prelude"] {
        case .array(let pushes)?:
            var prelude: [PushMessage] = []
            prelude.reserveCapacity(pushes.count)
            for push in pushes { prelude.append(try PushMessage(stored: push)) }
            self.prelude = prelude
        case nil, .null?: break
        default: throw StoredShapeMismatch()
        }
        if let verbatim = try members["verbatim"].storedOptionalObject() {
            guard let body = try verbatim["body"].storedString() else { throw StoredShapeMismatch() }
            var headers: [[String]]?
            switch verbatim["apnsHeaders"] {
            case .array(let rows)?:
                headers = try rows.map { row throws(StoredShapeMismatch) in
                    guard case .array(let fields) = row else { throw StoredShapeMismatch() }
                    return try fields.map { field throws(StoredShapeMismatch) in
                        guard case .string(let text) = field else { throw StoredShapeMismatch() }
                        return text
                    }
                }
            case nil, .null?: break
            default: throw StoredShapeMismatch()
            }
            self.verbatim = Verbatim(apnsHeaders: headers, body: body)
        }
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

/// A stored message in a shape only `JSONDecoder` should judge.
struct StoredShapeMismatch: Error {}

extension JSONValue {
    fileprivate func storedObject() throws(StoredShapeMismatch) -> [String: JSONValue] {
        guard case .object(let members) = self else { throw StoredShapeMismatch() }
        return members
    }
}

extension Optional where Wrapped == JSONValue {
    /// A string member: nil when absent or null, as `decodeIfPresent` reads it.
    fileprivate func storedString() throws(StoredShapeMismatch) -> String? {
        switch self {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw StoredShapeMismatch()
        }
    }

    fileprivate func storedOptionalObject() throws(StoredShapeMismatch) -> [String: JSONValue]? {
        switch self {
        case nil, .null?: return nil
        case .object(let members)?: return members
        default: throw StoredShapeMismatch()
        }
    }

    /// A required object of strings (`data`).
    fileprivate func storedStringMap() throws(StoredShapeMismatch) -> [String: String] {
        guard case .object(let members)? = self else { throw StoredShapeMismatch() }
        var map: [String: String] = [:]
        map.reserveCapacity(members.count)
        for (name, value) in members {
            guard case .string(let text) = value else { throw StoredShapeMismatch() }
            map[name] = text
        }
        return map
    }
}
