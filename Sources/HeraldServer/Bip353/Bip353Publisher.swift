import Foundation
import HeraldBolt12
import HeraldDNS
import HeraldPush
import HeraldStore
import HeraldWire
import Logging

/// Where BIP-353 records are published: the primary server that takes RFC 2136 updates for the
/// zone, the TSIG key it takes them with, and the TTL records get.
public struct Bip353Settings: Sendable {
    public var server: DNSServerAddress
    public var key: TSIGKey
    /// `_bitcoin-payment.<domain>`: a record is `<username>.user.<zone>`.
    public var zone: DNSName
    /// Seconds, at most the offer's remaining life when it has an expiry.
    public var ttl: Int
    /// How long one UPDATE may take before it is tried again.
    public var timeout: Duration = .seconds(10)

    public init(server: DNSServerAddress, key: TSIGKey, zone: DNSName, ttl: Int = 3600) {
        self.server = server
        self.key = key
        self.zone = zone
        self.ttl = ttl
    }

    public static let defaultTTL = 3600

    /// `<username>.user.<zone>`.
    func recordName(_ username: String) throws -> DNSName {
        try DNSName("\(username).user.\(zone)")
    }

    /// `₿alice@domain`: the zone without its `_bitcoin-payment.` label.
    func address(_ username: String) -> String {
        let domain =
            zone.description.hasPrefix("_bitcoin-payment.") ? String(zone.description.dropFirst("_bitcoin-payment.".count)) : zone.description
        return "₿\(username)@\(domain.hasSuffix(".") ? String(domain.dropLast()) : domain)"
    }
}

/// The outbox's DNS destination: a job names usernames, and sending it writes their records as
/// the store wants them *now* (one UPDATE: each name's TXT deleted, then added back where it has
/// a text), so a job sent late, twice, or after a later one still leaves the latest state.
struct Bip353Publisher: PushProvider {
    var name: String { "dns" }
    let settings: Bip353Settings
    let store: any Bip353Store
    let client: DNSClient
    var now: @Sendable () -> Date = { Date() }

    func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard target.destination == .dns else { throw PushValidationError(.invalidMessage, message: "a DNS job writes BIP-353 records") }
        try PushTokenForm.check(target.token, destination: .dns)
    }

    func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        let names = target.token.split(separator: " ").map(String.init)
        let wanted: [String: Bip353Record]
        do {
            wanted = Dictionary(try await store.bip353Records(names: names).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            return PushOutcome(kind: .retry, reason: "store_unavailable")
        }
        let update: DNSUpdateMessage
        do {
            var operations: [DNSUpdateOperation] = []
            for username in names {
                let name = try settings.recordName(username)
                // One `bitcoin:` TXT, never two: whatever is there goes in the same UPDATE.
                operations.append(.deleteRRset(name: name, type: .txt))
                if let record = wanted[username], let uri = record.uri {
                    operations.append(
                        .addTXT(name: name, ttl: UInt32(clamping: ttl(of: record, uri: uri)), strings: try TXTRecord.characterStrings(for: uri)))
                }
            }
            update = try DNSUpdateMessage(zone: settings.zone, updates: operations)
        } catch {
            return PushOutcome(kind: .permanent, reason: "unencodable: \(error)")
        }
        do {
            let result = try await client.update(update, key: settings.key, server: settings.server, timeout: settings.timeout)
            switch result {
            case .success:
                return PushOutcome(kind: .delivered)
            case .serverFailure:
                logger.notice("DNS server answered SERVFAIL; will retry", metadata: ["dns.server": "\(settings.server)"])
                return PushOutcome(kind: .retry, reason: Self.rcode(result))
            default:
                logger.error(
                    "DNS server refused the BIP-353 update", metadata: ["dns.server": "\(settings.server)", "rcode": "\(Self.rcode(result))"])
                return PushOutcome(kind: .permanent, reason: Self.rcode(result))
            }
        } catch {
            if error.isRetryable {
                logger.notice("DNS server unreachable; will retry", metadata: ["dns.server": "\(settings.server)", "error": "\(error)"])
                return PushOutcome(kind: .retry, reason: error.reason.rawValue)
            }
            logger.error("DNS update failed", metadata: ["dns.server": "\(settings.server)", "error": "\(error)"])
            return PushOutcome(kind: .permanent, reason: error.reason.rawValue)
        }
    }

    /// The record's TTL, or what its offer has left now when that is less: a job sent late, or a
    /// rename carrying an offer claimed earlier, never publishes past the offer's expiry.
    func ttl(of record: Bip353Record, uri: String) -> Int {
        guard uri.hasPrefix(Bip353Names.uriPrefix), let offer = try? Bolt12Offer(String(uri.dropFirst(Bip353Names.uriPrefix.count))),
            let left = offer.secondsUntilExpiry(atUnixTime: UInt64(max(0, now().timeIntervalSince1970)))
        else { return record.ttl }
        return min(record.ttl, Int(clamping: left))
    }

    /// The RCODE's mnemonic as DNS tools print it (`NOTAUTH`, `REFUSED` …); a TSIG failure is a
    /// NOTAUTH whose TSIG record says which (RFC 8945 §5.2): `NOTAUTH/BADSIG`.
    static func rcode(_ result: DNSUpdateResult) -> String {
        switch result {
        case .badSignature, .badKey, .badTime: "NOTAUTH/" + result.reason.uppercased()
        default: result.reason.uppercased()
        }
    }
}
