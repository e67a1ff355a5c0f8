import Crypto
import Foundation
import HeraldBech32
import HeraldWire

/// A NIP-57 zap request (kind 9734), checked as Appendix D asks before any invoice is made for it.
public struct ZapRequest: Sendable, Hashable {
    /// The event as the payer sent it, byte for byte: the invoice's description hash commits to
    /// it and the receipt's `description` carries it.
    public let json: String
    public let event: NostrEvent
    /// The recipient (`p`).
    public let recipient: String
    /// The zapped event (`e`) or address (`a`), and the sender (`P`), copied to the receipt.
    public let eventID: String?
    public let coordinate: String?
    public let sender: String?
    /// Where the receipt goes: 1 to ``maximumRelays`` `wss://` URLs.
    public let relays: [String]
    /// Millisatoshis, when the request names them.
    public let amount: UInt64?

    public static let kind = 9734
    public static let maximumRelays = 10
    /// A zap request longer than this is no payer's: refused before parsing.
    public static let maximumBytes = 16 * 1024

    /// Why a zap request was refused: the rule of NIP-57 Appendix D (or Herald's limits) it breaks.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var rule: String
        public var message: String
        public var description: String { "zap request \(rule): \(message)" }

        public init(rule: String, message: String) {
            self.rule = rule
            self.message = message
        }
    }

    /// SHA-256 of the request as received: the description hash of its invoice.
    public var descriptionHash: [UInt8] { Array(SHA256.hash(data: Data(json.utf8))) }

    /// Checks `json` for a zap of `amount` msat to the address whose LNURL-pay URL is `payURL`;
    /// with nil for either, its tag is not compared (a request read back once checked).
    public init(json: String, amount: UInt64?, payURL: String?) throws(Invalid) {
        func fail(_ rule: String, _ message: String) -> Invalid { Invalid(rule: rule, message: message) }
        guard json.utf8.count <= Self.maximumBytes else { throw fail("size", "at most \(Self.maximumBytes) bytes") }
        guard let event = try? WireJSON.decode(NostrEvent.self, from: Data(json.utf8)) else {
            throw fail("json", "not a Nostr event (id, pubkey, created_at, kind, tags, content, sig)")
        }
        guard event.kind == Self.kind else { throw fail("kind", "must be 9734, not \(event.kind)") }
        guard NostrHex.isLowerHex32(event.pubkey) else { throw fail("pubkey", "must be 64 lower-case hex digits") }
        guard event.isValid else { throw fail("signature", "the id or the BIP-340 signature does not verify") }
        guard !event.tags.isEmpty else { throw fail("tags", "a zap request must have tags") }

        let p = event.tags(named: "p")
        guard p.count == 1, let recipient = p[0].first, NostrHex.isLowerHex32(recipient) else {
            throw fail("p", "exactly one p tag with a 64-hex-digit public key")
        }
        let e = event.tags(named: "e")
        guard e.count <= 1 else { throw fail("e", "at most one e tag") }
        if let id = e.first, !(id.first.map(NostrHex.isLowerHex32) ?? false) {
            throw fail("e", "the e tag must hold a 64-hex-digit event id")
        }
        let sender = event.tags(named: "P")
        guard sender.count <= 1 else { throw fail("P", "at most one P tag") }
        if let key = sender.first, !(key.first.map(NostrHex.isLowerHex32) ?? false) {
            throw fail("P", "the P tag must hold a 64-hex-digit public key")
        }
        let a = event.tags(named: "a")
        guard a.count <= 1 else { throw fail("a", "at most one a tag") }
        if let coordinate = a.first, !Self.isCoordinate(coordinate.first ?? "") {
            throw fail("a", "the a tag must be an event coordinate <kind>:<64 hex pubkey>:<d tag>")
        }
        let relayTags = event.tags(named: "relays")
        guard relayTags.count == 1, let relays = relayTags.first, !relays.isEmpty else {
            throw fail("relays", "one relays tag naming the relays to publish the receipt to")
        }
        guard relays.count <= Self.maximumRelays else { throw fail("relays", "at most \(Self.maximumRelays) relays") }
        if let relay = relays.first(where: { !NostrRelayURL.isValid($0) }) {
            throw fail("relays", "every relay must be a wss:// URL, not \(relay.prefix(80))")
        }
        let amounts = event.tags(named: "amount")
        guard amounts.count <= 1 else { throw fail("amount", "at most one amount tag") }
        var named: UInt64?
        if let text = amounts.first?.first {
            guard let value = UInt64(text) else { throw fail("amount", "the amount tag must be millisatoshis") }
            if let amount, value != amount {
                throw fail("amount", "the amount tag says \(value) msat, the request \(amount) msat")
            }
            named = value
        }
        let lnurls = event.tags(named: "lnurl")
        guard lnurls.count <= 1 else { throw fail("lnurl", "at most one lnurl tag") }
        if let lnurl = lnurls.first?.first {
            guard let url = LNURL.decode(lnurl), payURL.map({ url == $0 }) ?? true else {
                throw fail("lnurl", "the lnurl tag is not this address's LNURL")
            }
        }
        self.json = json
        self.event = event
        self.recipient = recipient
        self.eventID = e.first?.first
        self.coordinate = a.first?.first
        self.sender = sender.first?.first
        self.relays = relays
        self.amount = named
    }

    /// `<kind>:<pubkey>:<d>` (NIP-01): a kind number, a 64-hex-digit key, any identifier.
    static func isCoordinate(_ text: String) -> Bool {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = Int(parts[0]), (0...65535).contains(kind) else { return false }
        return NostrHex.isLowerHex32(String(parts[1]))
    }
}

/// LUD-01 LNURLs: a URL in bech32 with the `lnurl` prefix, without bech32's 90-character limit.
public enum LNURL {
    public static func encode(_ url: String) -> String {
        Bech32.encode(hrp: "lnurl", data: Bech32.regroup(Array(url.utf8), from: 8, to: 5, pad: true))
    }

    /// The URL an LNURL holds; nil when it is not one.
    public static func decode(_ text: String) -> String? {
        guard let decoded = try? Bech32.decode(text.lowercased()), decoded.hrp == "lnurl" else { return nil }
        return String(bytes: Bech32.regroup(decoded.data, from: 5, to: 8, pad: false), encoding: .utf8)
    }
}
