import Foundation
import HeraldNostr
import HeraldPush
import HeraldWire

/// What the routes need to know about how the operator runs this NDS.
public struct ServerSettings: Sendable {
    /// The base URL third parties reach this server at; webhook URLs handed to apps start with it.
    public var publicURL: String
    /// Accept raw push tokens on the webhook, as Breez-style integrations send them. Off makes
    /// the webhook answer only registered aliases (no open push relay).
    public var acceptRawTokens: Bool
    /// How long a webhook's push is worth delivering; later it is dead-lettered.
    public var jobTTL: Duration
    /// Registrations allowed per client address per minute, on each registration route
    /// (devices, the wake gateway, NWC).
    public var registrationsPerMinute: Int
    /// The reverse proxies whose `X-Forwarded-For` / `Forwarded` name the client (`trusted_proxies`).
    public var trustedProxies = TrustedProxies.none
    /// Pushes allowed to one device token per minute, sustained (webhooks, relayed requests,
    /// backend events alike): a caller cannot spam a phone, whoever it is.
    public var targetPushesPerMinute: Int
    /// Pushes one device token may get at once after a quiet spell.
    public var targetPushBurst: Int
    /// Whether the local development provider is in use (enables the device push feed).
    public var localProvider: Bool
    /// Whether Web Push, too, is the local provider's (nothing is sent anywhere then).
    public var localWebPush = true
    /// How long a caller's request is held for the device's answer on its reply URL.
    public var replyTimeout: Duration
    /// Requests held for a device's answer at once, at most; past it a request that would be
    /// held gets `503 overloaded`. Each holds a connection and a waiter until its answer or timeout.
    public var maxHeldReplies: Int
    /// Requests one client address may hold at once for raw push tokens (they share half of
    /// ``maxHeldReplies``): a flood of fresh tokens from one caller cannot take the Lightning
    /// address's room.
    public var maxHeldRepliesPerClient = 16
    /// The largest answer a device may POST to a reply URL.
    public var replyBodyLimit: Int
    /// How often held requests look in the store for answers that reached another process on
    /// the same database. Only that case: an answer this process takes completes its request at
    /// once, so the poll is a slow fallback, and a query every 100 ms per held request mix was
    /// load for nothing on the one-process setup.
    public var replyPollInterval: Duration
    /// How long an answered or expired reply URL still says 409/410 before it is forgotten (404).
    public var replyTombstone: Duration
    /// How often a held presence stream gets a comment line: proxies keep it open, and a dead
    /// connection is found (and the device no longer counted present) within this.
    public var presenceKeepAlive: Duration
    /// Which Web Push endpoints registration takes (the provider applies the same policy).
    public var webPush: WebPushPolicy
    /// Zaps (NIP-57) on the Lightning address, when a Nostr key is configured.
    public var zaps: ZapSettings?
    /// Who may register a device, and so point an alias at a push token.
    public var registration: RegistrationMode = .open
    /// The wake gateway's audience and topics (`wake_gateway`).
    public var wakeGateway = WakeGatewaySettings()
    /// The capabilities' own settings, each read by its room (``rooms``).
    public var identity = IdentitySettings()
    public var wakes = WakeSettings()
    public var liveActivities = LiveActivitySettings()
    public var nwc = NwcSettings()
    /// BIP-353 names, published by DNS UPDATE; nil: off.
    public var bip353: Bip353Settings?
    public var breez = BreezSettings()

    /// The rooms whose rows follow the core settings in ``HeraldConfiguration/settings`` (and
    /// docs/configuration.md), in that order, each with the property that keeps its settings.
    static let rooms: [RoomBinding] = [.init(\.identity), .init(\.wakes), .init(\.liveActivities), .init(\.nwc), .init(\.bip353), .init(\.breez)]

    /// Reads each room's settings, through a reader scoped to it.
    mutating func readRooms(from reader: SettingsReader) throws {
        for binding in Self.rooms { try binding.read(&self, reader.scoped(for: binding.room)) }
    }

    /// The audience registrations through the wake gateway are signed for.
    var wakeGatewayAudience: String {
        wakeGateway.audience ?? URLComponents(string: publicURL)?.host ?? publicURL
    }

    /// The policy registration applies: the local development provider sends nothing anywhere,
    /// so with it an endpoint's addresses do not matter (and need not resolve).
    var registrationWebPushPolicy: WebPushPolicy {
        var policy = webPush
        if localProvider && localWebPush { policy.allowPrivateEndpoints = true }
        return policy
    }

    public init(
        publicURL: String,
        acceptRawTokens: Bool = true,
        jobTTL: Duration = .seconds(3600),
        registrationsPerMinute: Int = 30,
        targetPushesPerMinute: Int = 60,
        targetPushBurst: Int = 20,
        localProvider: Bool = false,
        replyTimeout: Duration = .seconds(30),
        maxHeldReplies: Int = 1_024,
        replyBodyLimit: Int = 64 * 1024,
        replyPollInterval: Duration = .seconds(1),
        replyTombstone: Duration = .seconds(600),
        presenceKeepAlive: Duration = .seconds(15),
        webPush: WebPushPolicy = WebPushPolicy()
    ) {
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.acceptRawTokens = acceptRawTokens
        self.jobTTL = jobTTL
        self.registrationsPerMinute = registrationsPerMinute
        self.targetPushesPerMinute = targetPushesPerMinute
        self.targetPushBurst = targetPushBurst
        self.localProvider = localProvider
        self.replyTimeout = replyTimeout
        self.maxHeldReplies = maxHeldReplies
        self.replyBodyLimit = replyBodyLimit
        self.replyPollInterval = replyPollInterval
        self.replyTombstone = replyTombstone
        self.presenceKeepAlive = presenceKeepAlive
        self.webPush = webPush
    }
}

/// What zaps need: the key receipts are signed with, and which relays a zap request may name.
public struct ZapSettings: Sendable {
    public var key: NostrSecretKey
    /// Relays on loopback, private, link-local or multicast addresses (tests).
    public var allowPrivateRelays: Bool

    public init(key: NostrSecretKey, allowPrivateRelays: Bool = false) {
        self.key = key
        self.allowPrivateRelays = allowPrivateRelays
    }
}

/// Who may register a device (`registration`).
public enum RegistrationMode: String, Sendable, CaseIterable {
    /// Anyone (the quick start): an alias can be made for any token.
    case open
    /// Anyone, but the alias pushes nothing except a one-time code until the app posts the code
    /// back, proving it receives pushes at the token. The plugin does this by itself.
    case challenge
    /// Only callers with an API key of scope `devices` (the app's backend).
    case key
}
