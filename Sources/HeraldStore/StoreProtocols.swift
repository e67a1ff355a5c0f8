import Foundation
import HeraldWire

/// The durable outbox: at-least-once delivery of pushes.
public protocol OutboxStore: Sendable {
    /// Where the outbox's own loops (intake's group commit, recording outcomes) run, for a
    /// store that writes on a thread of its own: there its writes need no hop. nil: anywhere.
    var writerExecutor: (any TaskExecutor)? { get }
    /// Where the dispatcher's sends run, for a store that writes on a thread of its own: that
    /// thread while it is idle, since a send begins after a commit there and ends with its
    /// outcome written there; the pool under load. nil: anywhere.
    var senderExecutor: (any TaskExecutor)? { get }

    /// Commits jobs in one transaction and returns one result per job, in order. The first
    /// `leasing` jobs start leased until `leaseUntil`, as the caller hands them straight to its
    /// dispatcher; the rest are due at once for ``claimDue(now:leaseUntil:limit:)``.
    func enqueue(_ jobs: [NewJob], now: Date, leaseUntil: Date, leasing: Int) async throws -> [EnqueueResult]
    /// Leases up to `limit` due jobs whose lease is free or expired, earliest due first.
    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxJob]
    /// When the earliest pending job not leased at `now` is due (in the past when one is due
    /// already); nil when there is none. Read from an index: cheap enough to ask after every claim.
    func nextDueAt(now: Date) async throws -> Date?
    /// Records send outcomes in one transaction.
    func complete(_ completions: [JobCompletion], now: Date) async throws
    /// Gives jobs back without counting an attempt (shutdown, a lease about to run out). With
    /// `leasedUntil`, only while each is still held under that lease: one that ran out may have
    /// been taken over, and the new holder's lease is not ours to free.
    func release(jobIDs: [String], leasedUntil: Date?) async throws
    /// Frees every lease: a single-process store calls it at start-up, when no other process can hold one
    /// (``StoreSharing/singleProcess``). A store shared by several processes refuses it.
    func releaseAllLeases() async throws
    func status(jobID: String) async throws -> JobStatus?
    /// Jobs by state. Counts every row: for tests and tools, not for a periodic metric.
    func counts() async throws -> QueueCounts
    /// Jobs still to be delivered, read from an index: cheap enough to run every few seconds.
    func pendingCount() async throws -> Int
    /// Deletes finished jobs older than the given moments; returns how many.
    func purgeFinished(deliveredBefore: Date, deadBefore: Date) async throws -> Int
    /// The jobs already made under these idempotency keys, by key: what a retry finds before it
    /// spends anything (a device's push allowance) on being sent again.
    func jobs(idempotencyKeys: [String]) async throws -> [String: EarlierJob]
}

/// A job already made under an idempotency key.
public struct EarlierJob: Sendable, Hashable {
    public var id: String
    public var fingerprint: String?
    public init(id: String, fingerprint: String?) {
        self.id = id
        self.fingerprint = fingerprint
    }
}

extension OutboxStore {
    public var writerExecutor: (any TaskExecutor)? { nil }
    public var senderExecutor: (any TaskExecutor)? { nil }

    /// Gives jobs back whoever holds them.
    public func release(jobIDs: [String]) async throws {
        try await release(jobIDs: jobIDs, leasedUntil: nil)
    }

    /// Commits jobs that all start leased.
    public func enqueue(_ jobs: [NewJob], now: Date, leaseUntil: Date) async throws -> [EnqueueResult] {
        try await enqueue(jobs, now: now, leaseUntil: leaseUntil, leasing: jobs.count)
    }
}

/// Tokens a push service said will never work again.
public protocol TokenStore: Sendable {
    func isDead(platform: Platform, token: String) async throws -> Bool
    func markDead(platform: Platform, token: String, reason: String, now: Date) async throws
}

/// Devices registered by apps: the real push token behind an unguessable alias.
public protocol DeviceStore: Sendable {
    /// Registers a device of `app`, with what else it registered, in one transaction: a failure
    /// leaves no device whose secret nobody received. With a `sealKey`, pushes to it are sealed
    /// to that key.
    func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, app: String, extras: DeviceExtras, now: Date
    ) async throws -> DeviceRegistration
    /// The device a webhook alias points at.
    func device(alias: String) async throws -> Device?
    /// The device, if the secret opens it.
    func device(id: String, secret: String) async throws -> Device?
    /// Makes the changes `changes` names to the device, and no other, in one transaction: a
    /// failure leaves the device as it was. Answers the LSP node id and identities the device
    /// holds afterwards, read in that transaction.
    func updateDevice(id: String, changes: DeviceChanges, now: Date) async throws -> UpdatedDevice
    /// Deletes the device and remembers its alias as deleted: its webhook URL answers `410` from
    /// then on, and is never taken for a raw push token. Fallback alerts of its wakes that are
    /// still pending are cancelled with it: nobody is left to alert.
    func deleteDevice(id: String, now: Date) async throws
    /// A webhook's `token` parameter in one read: the device it is the alias of, if any, and
    /// whether the push token it leads to (the device's, or the raw token on `rawPlatform`) is dead.
    func resolveWebhookToken(_ token: String, rawPlatform: Platform?) async throws -> WebhookTokenResolution
}

/// What a registration may carry beside the device itself, written with it.
public struct DeviceExtras: Sendable, Hashable {
    /// The LSP whose LSPS5 notifications wake the device (66 hex digits).
    public var lspNodeID: String?
    /// The identities the device proved (``IdentityStore``).
    public var identities: [String]
    /// SHA-256 of the one-time code of its challenge (``DeviceChallengeStore``).
    public var challengeHash: Data?
    /// A registration through the wake gateway API. It replaces the install's earlier device only
    /// if it proves one of that device's identities or presents its secret
    /// (``WakeGatewayDevice/presentedSecretSHA256``), else ``WakeGatewayInstallTaken`` is thrown
    /// and nothing is written; check and write are one transaction. The earlier device's wake
    /// deliveries pass to the new one (an ack still cancels their fallbacks), and its pending
    /// fallbacks go to the new token.
    public var wakeGateway: WakeGatewayDevice?

    public init(
        lspNodeID: String? = nil, identities: [String] = [], challengeHash: Data? = nil, wakeGateway: WakeGatewayDevice? = nil
    ) {
        self.lspNodeID = lspNodeID
        self.identities = identities
        self.challengeHash = challengeHash
        self.wakeGateway = wakeGateway
    }
}

/// One part of a device an update may change: kept as it is, or set (for an optional part, to
/// nil to remove it).
public enum DeviceChange<Value: Sendable & Hashable>: Sendable, Hashable {
    case keep
    case set(Value)
}

/// What an update of a device (`PUT /api/v1/devices/{id}`) changes, written in one transaction.
public struct DeviceChanges: Sendable, Hashable {
    /// Where pushes to the device go.
    public struct PushToken: Sendable, Hashable {
        public var platform: Platform
        public var token: String

        public init(platform: Platform, token: String) {
            self.platform = platform
            self.token = token
        }
    }

    public var pushToken: DeviceChange<PushToken>
    /// The key pushes are sealed to; nil stops sealing.
    public var sealKey: DeviceChange<SealPublicKey?>
    /// The LSP whose LSPS5 notifications wake the device (66 hex digits); nil forgets it.
    public var lspNodeID: DeviceChange<String?>
    /// The identities the device proved, replacing those it held; empty forgets them. The
    /// caller checked the proofs first.
    public var identities: DeviceChange<[String]>
    /// SHA-256 of the one-time code of a new challenge (``DeviceChallengeStore``): the device is
    /// unconfirmed until the code comes back.
    public var challengeHash: DeviceChange<Data>

    public init(
        pushToken: DeviceChange<PushToken> = .keep, sealKey: DeviceChange<SealPublicKey?> = .keep,
        lspNodeID: DeviceChange<String?> = .keep, identities: DeviceChange<[String]> = .keep,
        challengeHash: DeviceChange<Data> = .keep
    ) {
        self.pushToken = pushToken
        self.sealKey = sealKey
        self.lspNodeID = lspNodeID
        self.identities = identities
        self.challengeHash = challengeHash
    }
}

/// What a device holds beside its token after an update, read in the update's transaction.
public struct UpdatedDevice: Sendable, Hashable {
    /// Its LSP node id; nil when it has none.
    public var lspNodeID: String?
    /// Its identities, sorted; empty when it holds none.
    public var identities: [String]

    public init(lspNodeID: String?, identities: [String]) {
        self.lspNodeID = lspNodeID
        self.identities = identities
    }
}

extension DeviceStore {
    /// Registers a device of `app` with nothing beside it.
    public func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, app: String, now: Date
    ) async throws -> DeviceRegistration {
        try await registerDevice(platform: platform, token: token, sealKey: sealKey, app: app, extras: DeviceExtras(), now: now)
    }

    /// Registers a device of the default app whose pushes are not sealed.
    public func registerDevice(platform: Platform, token: String, now: Date) async throws -> DeviceRegistration {
        try await registerDevice(platform: platform, token: token, sealKey: nil, app: Device.defaultApp, now: now)
    }

    /// Registers a device of the default app.
    public func registerDevice(
        platform: Platform, token: String, sealKey: SealPublicKey?, now: Date
    ) async throws -> DeviceRegistration {
        try await registerDevice(platform: platform, token: token, sealKey: sealKey, app: Device.defaultApp, now: now)
    }
}

public struct WebhookTokenResolution: Sendable, Hashable {
    /// The device whose alias the token is; nil for a raw push token.
    public var device: Device?
    /// The push service reported the resolved token as gone.
    public var isDead: Bool
    /// The token is the alias of a device deleted since (`DELETE /api/v1/devices/{id}`).
    public var isDeletedAlias: Bool

    public init(device: Device?, isDead: Bool, isDeletedAlias: Bool = false) {
        self.device = device
        self.isDead = isDead
        self.isDeletedAlias = isDeletedAlias
    }
}

/// What a device alias looks like: `a.` and 24 characters of base64url (18 random bytes). No
/// push service issues a token with a `.` (APNs tokens are hex, FCM's letters, digits, `-`, `_`
/// and `:`), so a webhook token of this form is an alias, never a raw token. Aliases issued
/// before the prefix (24 characters of base64url alone) still resolve to their devices.
public enum DeviceAlias {
    static let prefix = "a."

    public static func make() -> String { prefix + Secrets.random(bytes: 18) }

    public static func hasAliasForm(_ token: String) -> Bool {
        token.hasPrefix(prefix) && token.utf8.count == prefix.utf8.count + 24
            && isBase64URL(token.utf8.dropFirst(prefix.utf8.count))
    }

    /// Whether some device's alias, current or issued before the prefix, could be `token`; a
    /// token that could not (a 64-digit APNs token, most FCM tokens) skips the alias lookups.
    public static func couldBeAlias(_ token: String) -> Bool {
        hasAliasForm(token) || (token.utf8.count == 24 && isBase64URL(token.utf8))
    }

    private static func isBase64URL(_ characters: some Sequence<UInt8>) -> Bool {
        characters.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}

/// Pushes the local development provider recorded, for the device they were addressed to. They
/// are written with their jobs' outcomes (``JobCompletion/localPushes``).
public protocol LocalPushStore: Sendable {
    func localPushes(platform: Platform, token: String, after: Int64, limit: Int) async throws -> [LocalPush]
    /// The device whose feed the token's pushes are: the first registered with it. A device
    /// registered later with the same token (someone else's, say) reads nothing of it.
    func feedOwner(platform: Platform, token: String) async throws -> String?
}

public struct Device: Sendable, Hashable {
    public var id: String
    public var platform: Platform
    public var token: String
    public var alias: String
    /// The key every push to this device is sealed to; nil for clear pushes.
    public var sealKey: SealPublicKey? = nil
    /// The app it was registered for: whose credentials push to it.
    public var app: String = Device.defaultApp

    /// The app of a single-app deployment, and of a device that names none.
    public static let defaultApp = "default"

    public init(
        id: String, platform: Platform, token: String, alias: String, sealKey: SealPublicKey? = nil,
        app: String = Device.defaultApp
    ) {
        self.id = id
        self.platform = platform
        self.token = token
        self.alias = alias
        self.sealKey = sealKey
        self.app = app
    }
}

/// A new device: the secret is returned once and only its hash is kept.
public struct DeviceRegistration: Sendable, Hashable {
    public var device: Device
    public var secret: String

    /// A new device's id, alias (144 random bits) and secret (256 bits), before it is stored.
    public static func make(platform: Platform, token: String, sealKey: SealPublicKey?, app: String) -> DeviceRegistration {
        let device = Device(
            id: UUID().uuidString.lowercased(),
            platform: platform,
            token: token,
            alias: DeviceAlias.make(),
            sealKey: sealKey,
            app: app
        )
        return DeviceRegistration(device: device, secret: Secrets.random(bytes: 32))
    }

    public init(device: Device, secret: String) {
        self.device = device
        self.secret = secret
    }
}

public struct LocalPush: Sendable, Hashable {
    public var seq: Int64
    public var platform: Platform
    public var payload: Data
    public var createdAt: Date

    public init(seq: Int64, platform: Platform, payload: Data, createdAt: Date) {
        self.seq = seq
        self.platform = platform
        self.payload = payload
        self.createdAt = createdAt
    }
}
