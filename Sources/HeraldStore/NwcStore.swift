import Foundation

/// One app's Nostr Wallet Connect connection to a wallet, as breez-lnurl's clients register it:
/// requests signed by `appPubkey` to `walletServicePubkey` on `relays` wake the wallet through
/// `webhookURL`.
public struct NwcRegistration: Sendable, Hashable {
    /// The x-only Nostr key of the wallet's NWC service, 64 lower-case hex digits.
    public var walletServicePubkey: String
    /// The x-only Nostr key of the app allowed to ask, 64 lower-case hex digits.
    public var appPubkey: String
    /// The compressed node key that signed the registration (the path of `POST /nwc/{pubkey}`).
    public var ownerPubkey: String
    public var webhookURL: String
    public var relays: [String]
    public var createdAt: Date
    /// When an event last went to the wallet, or the registration was made.
    public var lastUsedAt: Date

    public init(
        walletServicePubkey: String, appPubkey: String, ownerPubkey: String, webhookURL: String, relays: [String], createdAt: Date,
        lastUsedAt: Date
    ) {
        self.walletServicePubkey = walletServicePubkey
        self.appPubkey = appPubkey
        self.ownerPubkey = ownerPubkey
        self.webhookURL = webhookURL
        self.relays = relays
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

public enum NwcPutOutcome: Sendable, Hashable {
    case stored
    /// The owner holds `limit` registrations already and this one is new.
    case limitReached
}

/// NWC registrations, the events already forwarded, and how far each wallet's subscription has
/// read: shared by every instance on one database.
public protocol NwcStore: Sendable {
    /// Adds the registration of (wallet service, app), or replaces it for the key that made it.
    func putNwcRegistration(_ registration: NwcRegistration, limit: Int) async throws -> NwcPutOutcome
    /// Removes (wallet service, app) if `owner` registered it; whether one went.
    func deleteNwcRegistration(walletServicePubkey: String, appPubkey: String, owner: String) async throws -> Bool
    func nwcRegistrations() async throws -> [NwcRegistration]
    /// The registrations one node key made (read from an index).
    func nwcRegistrations(owner: String) async throws -> [NwcRegistration]
    /// Marks an event forwarded; false when some instance marked it before (a relay repeated it,
    /// or another relay had it too).
    func claimNwcEvent(id: String, walletServicePubkey: String, appPubkey: String, createdAt: Int64, now: Date) async throws -> Bool
    /// Forgets a claim whose forwarding failed, so the event is taken again when a relay sends it again.
    func releaseNwcEvent(id: String) async throws
    /// When Herald received the newest event it forwarded for each wallet service (its own clock,
    /// whole seconds): where a new subscription starts. Never an event's `created_at`, which its
    /// author chose: one request dated ten years ahead would otherwise move the wallet's cursor
    /// past every request to come. Every wallet service that has one, in one read: a relay's
    /// subscriptions are laid out for thousands of wallets at once.
    func nwcCursors() async throws -> [String: Int64]
    /// Takes or renews the subscription lease of each wallet service key for `owner` (an
    /// instance) until `until`, where no other instance holds one that is still running; returns
    /// the keys `owner` holds now. One subscription per wallet, whichever instance runs it.
    func leaseNwcWallets(_ walletServicePubkeys: [String], owner: String, now: Date, until: Date) async throws -> Set<String>
    /// Forgets events forwarded before `seenBefore` and registrations unused since `unusedBefore`;
    /// returns how many registrations went.
    func purgeNwc(seenBefore: Date, unusedBefore: Date) async throws -> Int
}
