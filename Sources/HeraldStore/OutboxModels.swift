import Crypto
import Foundation
import HeraldWire

/// A push to enqueue. `payload` is the provider-independent message, opaque to the store.
public struct NewJob: Sendable, Hashable {
    public var id: String
    public var destination: JobDestination
    public var token: String
    public var notificationType: String
    public var payload: Data
    /// Scoped by the caller to its target, so two callers' keys never collide.
    public var idempotencyKey: String?
    /// A digest of what the caller sent with the key: the same key with another body is a
    /// caller's mistake or an attacker's guess, never a retry (``EnqueueResult/keyReused``).
    public var idempotencyFingerprint: String?
    public var expiresAt: Date
    /// The app whose credentials send it.
    public var app: String
    /// Not sent before this moment (a wake's fallback alert); nil: at once. Such a job is
    /// never handed straight to the dispatcher, whatever `leasing` says.
    public var dueAt: Date? = nil

    public init(
        id: String = JobID.make(),
        destination: JobDestination,
        token: String,
        notificationType: String,
        payload: Data,
        idempotencyKey: String?,
        idempotencyFingerprint: String? = nil,
        expiresAt: Date,
        app: String
    ) {
        self.idempotencyFingerprint = idempotencyFingerprint
        self.id = id
        self.destination = destination
        self.token = token
        self.notificationType = notificationType
        self.payload = payload
        self.idempotencyKey = idempotencyKey
        self.expiresAt = expiresAt
        self.app = app
    }
}

/// The answer to an enqueue: the job's id, and whether an earlier job with the same idempotency
/// key was found instead (nothing new is sent then).
public struct EnqueueResult: Sendable, Hashable {
    public var id: String
    public var duplicate: Bool
    /// A duplicate whose earlier job was made from another body (its fingerprint differs): the
    /// caller is refused, never handed the earlier job.
    public var keyReused: Bool
    public init(id: String, duplicate: Bool, keyReused: Bool = false) {
        self.id = id
        self.duplicate = duplicate
        self.keyReused = keyReused
    }

    /// The fingerprint of what came with an idempotency key: SHA-256 of its bytes, in hex (for
    /// an `Encodable` request, its wire JSON: sorted keys, so the same value is the same bytes).
    public static func fingerprint(of bytes: some Sequence<UInt8>) -> String {
        Array(SHA256.hash(data: Array(bytes))).lowercaseHex
    }

    /// Whether an earlier job's fingerprint says it came from another body than `fingerprint`.
    /// Jobs from before fingerprints were kept, and keys sent without one, never conflict.
    public static func reused(earlier: String?, now fingerprint: String?) -> Bool {
        guard let earlier, let fingerprint else { return false }
        return earlier != fingerprint
    }
}

/// A job claimed for sending.
public struct OutboxJob: Sendable, Hashable {
    public var id: String
    public var destination: JobDestination
    public var token: String
    public var notificationType: String
    public var payload: Data
    /// Sends already attempted before this one.
    public var attempts: Int
    public var createdAt: Date
    public var expiresAt: Date
    public var app: String

    public init(
        id: String,
        destination: JobDestination,
        token: String,
        notificationType: String,
        payload: Data,
        attempts: Int,
        createdAt: Date,
        expiresAt: Date,
        app: String
    ) {
        self.id = id
        self.destination = destination
        self.token = token
        self.notificationType = notificationType
        self.payload = payload
        self.attempts = attempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.app = app
    }

    public init(_ new: NewJob, createdAt: Date) {
        self.init(
            id: new.id,
            destination: new.destination,
            token: new.token,
            notificationType: new.notificationType,
            payload: new.payload,
            attempts: 0,
            createdAt: createdAt,
            expiresAt: new.expiresAt,
            app: new.app
        )
    }
}

/// What became of one send attempt.
public enum JobResolution: Sendable, Hashable {
    case delivered
    /// Try again at the given time.
    case retry(at: Date, error: String)
    /// Never deliverable: dead letter with the reason, and the push service's last answer when
    /// it was asked (nil when the job died before a send, e.g. its TTL ran out while it waited).
    case deadLetter(reason: String, answer: String? = nil)
    /// The token is gone: the job is dead-lettered, the token is marked dead and every other
    /// pending job for it is dead-lettered too.
    case tokenDead(reason: String)
}

public struct JobCompletion: Sendable, Hashable {
    public var job: OutboxJob
    public var resolution: JobResolution
    /// The bodies the local development provider rendered for this send (a prelude's first), to
    /// keep as the job's device's local pushes in the transaction that records the outcome.
    public var localPushes: [Data]
    /// The lease the send was made under. A retry or a dead letter is recorded only while the job
    /// is still held under it: once it ran out, another process may have taken the job over and
    /// be sending it, and its outcome, not this one, decides. A delivery is recorded whoever
    /// holds the job. nil: recorded unconditionally.
    public var leaseUntil: Date?
    public init(job: OutboxJob, resolution: JobResolution, localPushes: [Data] = [], leaseUntil: Date? = nil) {
        self.job = job
        self.resolution = resolution
        self.localPushes = localPushes
        self.leaseUntil = leaseUntil
    }
}

/// The state of one job, as an operator or a test reads it.
public struct JobStatus: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case pending, delivered, dead
    }
    public var id: String
    public var state: State
    public var attempts: Int
    public var lastError: String?
    public var nextAttemptAt: Date

    public init(id: String, state: State, attempts: Int, lastError: String?, nextAttemptAt: Date) {
        self.id = id
        self.state = state
        self.attempts = attempts
        self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt
    }
}

/// How many jobs are in each state.
public struct QueueCounts: Sendable, Hashable {
    public var pending: Int
    public var delivered: Int
    public var dead: Int
    public init(pending: Int, delivered: Int, dead: Int) {
        self.pending = pending
        self.delivered = delivered
        self.dead = dead
    }
}
