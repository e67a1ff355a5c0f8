import Foundation
import HeraldWire

/// What a device registered through Bitkit's wake gateway API holds beside its `device` row:
/// written with it in one transaction (``DeviceExtras/wakeGateway``), gone with it.
public struct WakeGatewayDevice: Sendable, Hashable {
    /// `app` and `install_id`: a newer registration from the same install replaces the older one.
    public var installKey: String
    /// SHA-256 of the device's `wkd_` bearer secret, lower-case hex: the device routes' key.
    public var secretSHA256: String
    /// The compressed secp256k1 key wakes are sealed to, hex.
    public var encryptionKey: String
    /// 0: legacy envelopes (`/api/device`), 1: wake v1.
    public var envelope: Int
    /// `production` or `sandbox`.
    public var environment: String
    /// Topic names and `namespace.*` patterns.
    public var topics: [String]
    /// The registration's `ts`, Unix seconds, as the phone sent it.
    public var registeredTS: Int64
    /// SHA-256 of the `wkd_` secret the registering caller presented (hex), if any: with the
    /// install's current secret it may replace the install's registration whatever it proves.
    public var presentedSecretSHA256: String?

    public init(
        installKey: String, secretSHA256: String, encryptionKey: String, envelope: Int, environment: String, topics: [String],
        registeredTS: Int64
    ) {
        self.installKey = installKey
        self.secretSHA256 = secretSHA256
        self.encryptionKey = encryptionKey
        self.envelope = envelope
        self.environment = environment
        self.topics = topics
        self.registeredTS = registeredTS
    }
}

/// A gateway registration for an install that another registration holds, made without proving
/// any of that registration's identities or presenting its secret: refused, so that knowing a
/// push token or an install id is not enough to take a phone's wakes.
public struct WakeGatewayInstallTaken: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the install is registered with other identities" }
}

/// A wake: what a producer asked for. Its deliveries say what became of it on each device.
public struct WakeRecord: Sendable, Hashable {
    public var id: String
    public var identity: String
    public var topic: String
    public var deadline: Date
    public var createdAt: Date
    public init(id: String, identity: String, topic: String, deadline: Date, createdAt: Date) {
        self.id = id
        self.identity = identity
        self.topic = topic
        self.deadline = deadline
        self.createdAt = createdAt
    }
}

/// One device's part in a wake.
public struct WakeDeliveryRecord: Sendable, Hashable {
    public var wakeID: String
    public var deviceID: String
    /// The push's job; nil when the device was present and nothing was pushed.
    public var jobID: String?
    /// The fallback alert's job, due `fallback_after_secs` after the wake; nil for a topic
    /// that is not alertable.
    public var fallbackJobID: String?
    public var present: Bool
    public var outcome: WakeAckOutcome?
    public var ackedAt: Date?
    /// The fallback was cancelled by a `handled` ack before it was sent.
    public var fallbackCancelled: Bool

    public init(
        wakeID: String, deviceID: String, jobID: String?, fallbackJobID: String?, present: Bool, outcome: WakeAckOutcome? = nil,
        ackedAt: Date? = nil, fallbackCancelled: Bool = false
    ) {
        self.wakeID = wakeID
        self.deviceID = deviceID
        self.jobID = jobID
        self.fallbackJobID = fallbackJobID
        self.present = present
        self.outcome = outcome
        self.ackedAt = ackedAt
        self.fallbackCancelled = fallbackCancelled
    }
}

/// A wake gateway device with its `device` row and whether its token is dead.
public struct WakeGatewayEntry: Sendable, Hashable {
    public var device: Device
    public var gateway: WakeGatewayDevice
    public var isDead: Bool
    public init(device: Device, gateway: WakeGatewayDevice, isDead: Bool) {
        self.device = device
        self.gateway = gateway
        self.isDead = isDead
    }
}

/// The wakes addressed to identities, their deliveries and acknowledgements, and the devices
/// of the wake gateway API. Shared by every instance on one database.
public protocol WakeLedgerStore: Sendable {
    /// The gateway device whose bearer secret hashes to `secretSHA256`.
    func wakeGatewayDevice(secretSHA256: String) async throws -> WakeGatewayEntry?
    /// The gateway device registered for an install, if any.
    func wakeGatewayDevice(installKey: String) async throws -> WakeGatewayEntry?
    /// Every gateway device that proved `identity`, in device-id order.
    func wakeGatewayDevices(identity: String) async throws -> [WakeGatewayEntry]
    func setWakeGatewayTopics(deviceID: String, topics: [String], now: Date) async throws

    /// Records a wake and its deliveries in one transaction. Again with the same id (a retry
    /// under one idempotency key after a failure), the deliveries take the new job ids.
    func recordWake(_ wake: WakeRecord, deliveries: [WakeDeliveryRecord]) async throws
    /// The wake and its deliveries, in device-id order.
    func wake(id: String) async throws -> (WakeRecord, [WakeDeliveryRecord])?
    /// Records a device's ack. `handled` also deletes the fallback's job if it is still
    /// pending and not being sent, in the same transaction; `received`, the first ack only,
    /// moves that job to no sooner than `now + receivedGrace`, but never later than a second
    /// before it expires (an alert the app's failure needs must still go). Nil when the wake
    /// was not delivered to the device.
    func acknowledgeWake(
        id: String, deviceID: String, outcome: WakeAckOutcome, now: Date, receivedGrace: TimeInterval
    ) async throws -> WakeDeliveryRecord?

    /// The value stored under `name`, made by `make` the first time any instance asks (a
    /// deployment's secrets: the key of its collapse ids), stamped `now` when made.
    func sharedSecret(name: String, now: Date, make: @Sendable () -> Data) async throws -> Data
}
