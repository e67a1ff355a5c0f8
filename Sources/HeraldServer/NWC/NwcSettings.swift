import HeraldPush

/// How Nostr Wallet Connect subscriptions reach relays, and how many (`nostr.*`).
public struct NwcSettings: RoomSettings {
    /// Trust roots, proxy and private relays: `nostr.allow_private_relays` (the zap receipts'
    /// rule too), and the egress's `tls.ca_file` and `https_proxy`.
    public var relays = NostrRelayProvider.Configuration()
    /// Registrations one node key may hold (`POST /nwc/{pubkey}`).
    public var registrationsPerKey = 50
    /// Distinct relays all NWC registrations together may name (`nostr.max_relays`): each is a
    /// connection Herald holds.
    public var maxRelays = 100
    /// Distinct relays on one host (`nostr.max_relays_per_host`): ten spellings or paths of one
    /// host are not ten connections to aim at it.
    public var maxRelaysPerHost = 4

    public init() {}

    static let scope: String? = "nostr"

    static var descriptions: [SettingDescription] {
        let defaults = NwcSettings()
        return [
            .init(
                "max_relays", default: String(defaults.maxRelays),
                "Distinct relays all NWC registrations together may name; past it 400 too_many_relays"),
            .init(
                "max_relays_per_host", default: String(defaults.maxRelaysPerHost),
                "Distinct NWC relays on one host; past it 400 too_many_relays"),
        ]
    }

    init(reader: SettingsReader) throws {
        if let value = try reader.bool("allow_private_relays") { relays.allowPrivateRelays = value }
        if let value = try reader.int("max_relays") { maxRelays = value }
        if let value = try reader.int("max_relays_per_host") { maxRelaysPerHost = value }
    }
}
