import Foundation
import HeraldWire
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Holds subscriptions on one relay (NIP-01): `["REQ", <id>, <filter>]` for each, then every
/// `["EVENT", <id>, <event>]` handed on with the event's JSON exactly as the relay sent it, until
/// the relay closes, refuses a subscription (`CLOSED`) or the task is cancelled. The connection
/// is the publisher's (``NostrRelayProvider``): TLS, the proxy, and a relay on a private address
/// refused unless allowed.
public struct NostrRelaySubscriber: Sendable {
    public var configuration: NostrRelayProvider.Configuration { connector.configuration }
    private let connector: RelayConnector

    public init(configuration: NostrRelayProvider.Configuration) throws {
        connector = try RelayConnector(configuration: configuration)
    }

    /// The relay refused a subscription: `CLOSED` naming it, or a `NOTICE` saying it has too
    /// many (what `nostr-relay` sends past its `subscription_limit`, naming none).
    public struct Closed: Error, CustomStringConvertible {
        /// The subscription refused, when the relay named it.
        public var subscription: String?
        public var message: String
        public var description: String {
            "the relay refused " + (subscription.map { "subscription \($0)" } ?? "a subscription") + ": \(message)"
        }
    }

    /// Runs the subscriptions; returns when the relay closes the connection, throws when it
    /// cannot be reached, is refused, or refuses a subscription.
    ///
    /// - Parameters:
    ///   - subscriptions: Subscription ids and their filter, each a JSON object.
    ///   - onEvent: The subscription id and the event's JSON text.
    public func run(
        url: String, subscriptions: [(id: String, filter: String)], logger: Logger,
        onEvent: @escaping @Sendable (_ subscription: String, _ event: String) async -> Void
    ) async throws {
        try await connector.run(url: url) { send, messages in
            for (id, filter) in subscriptions {
                try await send(#"["REQ","# + Self.quoted(id) + "," + filter + "]")
            }
            for try await text in messages {
                switch Self.frame(text) {
                case .event(let subscription, let event): await onEvent(subscription, event)
                case .closed(let subscription, let message):
                    throw Closed(subscription: subscription, message: message)
                case .notice(let message):
                    if Self.refusesSubscriptions(message) { throw Closed(subscription: nil, message: message) }
                    logger.debug("relay notice", metadata: ["nostr.relay": "\(url)", "notice": "\(message.prefix(200))"])
                case .other: continue
                }
            }
        }
    }

    /// The relay's NIP-11 document: what it says its limits are. Nil when it answers without
    /// one; throws when it cannot be asked (unreachable, or no answer in time).
    public func information(url: String) async throws -> RelayInformation? {
        try await connector.information(url: url)
    }

    enum Frame: Equatable {
        case event(subscription: String, event: String)
        case closed(subscription: String, message: String)
        case notice(String)
        case other
    }

    /// Whether a `NOTICE` says a subscription was refused for a limit ("rejected: too many
    /// subscriptions", "ERROR: max subscriptions reached"): relays say so in prose.
    static func refusesSubscriptions(_ notice: String) -> Bool {
        let text = notice.lowercased()
        guard text.contains("subscription") || text.contains(" req") || text.hasPrefix("req") else { return false }
        return ["too many", "limit", "max", "rejected", "exceed"].contains { text.contains($0) }
    }

    /// Reads a relay's message; an EVENT keeps its event's text byte for byte.
    static func frame(_ text: String) -> Frame {
        guard case .array(let items)? = try? JSONParser.parse(Array(text.utf8)), let verb = items.first?.stringValue else { return .other }
        switch verb {
        case "EVENT":
            guard items.count == 3, let subscription = items[1].stringValue, case .object = items[2], let raw = rawThirdElement(text)
            else { return .other }
            return .event(subscription: subscription, event: raw)
        case "NOTICE":
            return .notice(items.count > 1 ? items[1].stringValue ?? "" : "")
        case "CLOSED":
            return .closed(
                subscription: items.count > 1 ? items[1].stringValue ?? "" : "", message: items.count > 2 ? items[2].stringValue ?? "" : "")
        default:
            return .other
        }
    }

    /// The text of `[<string>, <string>, <object>]`'s object, as it stands: after the second
    /// string's closing quote and comma, up to the array's closing bracket.
    static func rawThirdElement(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        var index = 0
        var strings = 0
        while index < bytes.count, strings < 2 {
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                strings += 1
            }
            index += 1
        }
        guard let start = bytes[index...].firstIndex(of: UInt8(ascii: "{")),
            let end = bytes.lastIndex(of: UInt8(ascii: "]")), start < end
        else { return nil }
        var last = end - 1
        while last > start, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[last]) { last -= 1 }
        guard bytes[last] == UInt8(ascii: "}") else { return nil }
        return String(decoding: bytes[start...last], as: UTF8.self)
    }

    static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
