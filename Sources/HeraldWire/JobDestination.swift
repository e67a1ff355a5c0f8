/// Where an outbox job goes: a device's push service, or a service the outbox sends to with the
/// same retries, expiry, metrics and dead letters as pushes. Kept apart from ``Platform`` so that
/// nothing a device registers with can name a relay, a webhook or a DNS server.
public enum JobDestination: Hashable, Sendable {
    /// A device, through its platform's push service. The job's "token" is its push token.
    case device(Platform)
    /// Nostr relays, where zap receipts (NIP-57) are published. The job's "token" is the relay URL.
    case nostr
    /// An HTTP endpoint the outbox POSTs a JSON body to (an NWC request forwarded to another
    /// notification service). The job's "token" is the URL.
    case webhook
    /// BIP-353 records, written to a DNS server by RFC 2136 UPDATE. The job's "token" is the
    /// usernames whose records it writes, space separated; the records' contents are read when
    /// it is sent.
    case dns

    /// The device platform, nil for the outbox's own destinations.
    public var device: Platform? {
        guard case .device(let platform) = self else { return nil }
        return platform
    }
}

extension JobDestination: RawRepresentable, Codable {
    /// The stored spelling (a job's `platform` column, the admin API's `platform`, log labels): a
    /// device's is its platform's own, so one column holds both without a second one to keep.
    public init?(rawValue: String) {
        switch rawValue {
        case "nostr": self = .nostr
        case "webhook": self = .webhook
        case "dns": self = .dns
        default:
            guard let platform = Platform(rawValue: rawValue) else { return nil }
            self = .device(platform)
        }
    }

    public var rawValue: String {
        switch self {
        case .device(let platform): platform.rawValue
        case .nostr: "nostr"
        case .webhook: "webhook"
        case .dns: "dns"
        }
    }
}
