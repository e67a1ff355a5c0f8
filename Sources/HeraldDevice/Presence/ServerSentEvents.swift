import Foundation

/// One item of a `text/event-stream`: an event, or a comment line (`: connected`, `: keep-alive`),
/// which the presence stream uses as its handshake and heartbeat.
public enum ServerSentEvent: Sendable, Hashable {
    /// `event:` (default `message`), the `data:` lines joined with `\n`, and the last `id:`.
    case event(name: String, data: String, id: String?)
    /// The text after `:` with one leading space removed.
    case comment(String)
}

/// An incremental `text/event-stream` parser (WHATWG HTML §9.2.6): fed bytes as they arrive, in
/// chunks cut anywhere, it returns the items completed so far. It keeps only the unfinished line
/// and the event being built, so a stream held for hours costs no more memory than one event.
public struct ServerSentEventParser: Sendable {
    /// Lines longer than this are dropped (with the rest of their event): a broken or hostile peer
    /// must not make an extension's process grow.
    public var maximumLineBytes: Int

    private var line: [UInt8] = []
    private var lineTooLong = false
    private var sawCarriageReturn = false
    private var atStart = true
    private var eventName = ""
    private var data: [String] = []
    private var hasData = false
    private var lastID: String?
    private var discardEvent = false

    public init(maximumLineBytes: Int = 16 * 1024) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Feeds the next bytes; returns every item they complete.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var items: [ServerSentEvent] = []
        for byte in bytes {
            // A CR LF pair ends one line, not two.
            if sawCarriageReturn {
                sawCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                sawCarriageReturn = true
                endLine(into: &items)
            case UInt8(ascii: "\n"):
                endLine(into: &items)
            default:
                if line.count < maximumLineBytes {
                    line.append(byte)
                } else {
                    lineTooLong = true
                }
            }
        }
        return items
    }

    private mutating func endLine(into items: inout [ServerSentEvent]) {
        defer {
            line.removeAll(keepingCapacity: line.count <= 1024)
            lineTooLong = false
        }
        var bytes = line[...]
        // A byte-order mark may open the stream.
        if atStart {
            atStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        if lineTooLong {
            discardEvent = true
            return
        }
        if bytes.isEmpty {
            dispatch(into: &items)
            return
        }
        if bytes.first == UInt8(ascii: ":") {
            items.append(.comment(Self.text(bytes.dropFirst())))
            return
        }
        let field: String
        let value: String
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            value = Self.text(bytes[bytes.index(after: colon)...])
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event": eventName = value
        case "data":
            data.append(value)
            hasData = true
        case "id" where !value.contains("\0"): lastID = value
        default: break  // `retry` and unknown fields: the reporter keeps its own backoff.
        }
    }

    private mutating func dispatch(into items: inout [ServerSentEvent]) {
        defer {
            eventName = ""
            data.removeAll()
            hasData = false
            discardEvent = false
        }
        guard hasData, !discardEvent else { return }
        items.append(.event(name: eventName.isEmpty ? "message" : eventName, data: data.joined(separator: "\n"), id: lastID))
    }

    /// A field value or comment: UTF-8 with one leading space removed.
    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.first == UInt8(ascii: " ") ? bytes.dropFirst() : bytes, as: UTF8.self)
    }
}
