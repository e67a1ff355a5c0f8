import Foundation

/// `POST /api/v1/wake`: an LSP (or any sender holding an API key with scope `wake`) asks Herald
/// to wake a device because a payment or channel waits for it.
public struct WakeRequest: Codable, Sendable, Hashable {
    /// The device id from registration.
    public var device: String
    public var kind: WakeKind
    /// Hex; also what repeated wakes for one payment are recognised by.
    public var paymentHash: String?
    public var amountMsat: UInt64?
    /// After this moment the push services should stop trying (`apns-expiration`, FCM `ttl`).
    /// Unix seconds on the wire.
    public var expiresAt: Date?
    /// On iOS, when the visible alert is sent: with the silent push, or only if the device has
    /// not acknowledged the wake `handled` in time. Absent: the server's `wake_alert`.
    public var wakeAlert: WakeAlert?
    /// With `wake_alert: fallback`, the seconds before the alert; absent: the server's
    /// `wake_fallback_after`.
    public var fallbackAfterSecs: Int?

    public init(
        device: String, kind: WakeKind, paymentHash: String? = nil, amountMsat: UInt64? = nil, expiresAt: Date? = nil,
        wakeAlert: WakeAlert? = nil, fallbackAfterSecs: Int? = nil
    ) {
        self.device = device
        self.kind = kind
        self.paymentHash = paymentHash
        self.amountMsat = amountMsat
        self.expiresAt = expiresAt
        self.wakeAlert = wakeAlert
        self.fallbackAfterSecs = fallbackAfterSecs
    }

    enum CodingKeys: String, CodingKey {
        case device, kind
        case paymentHash = "payment_hash"
        case amountMsat = "amount_msat"
        case expiresAt = "expires_at"
        case wakeAlert = "wake_alert"
        case fallbackAfterSecs = "fallback_after_secs"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decode(String.self, forKey: .device)
        kind = try container.decode(WakeKind.self, forKey: .kind)
        paymentHash = try container.decodeIfPresent(String.self, forKey: .paymentHash)
        amountMsat = try container.decodeIfPresent(UInt64.self, forKey: .amountMsat)
        expiresAt = try container.decodeIfPresent(Int64.self, forKey: .expiresAt).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        wakeAlert = try container.decodeIfPresent(WakeAlert.self, forKey: .wakeAlert)
        fallbackAfterSecs = try container.decodeIfPresent(Int.self, forKey: .fallbackAfterSecs)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device, forKey: .device)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(paymentHash, forKey: .paymentHash)
        try container.encodeIfPresent(amountMsat, forKey: .amountMsat)
        try container.encodeIfPresent(expiresAt.map { Int64($0.timeIntervalSince1970.rounded(.down)) }, forKey: .expiresAt)
        try container.encodeIfPresent(wakeAlert, forKey: .wakeAlert)
        try container.encodeIfPresent(fallbackAfterSecs, forKey: .fallbackAfterSecs)
    }
}

/// When a wake of an iPhone shows its alert.
public enum WakeAlert: String, Codable, Sendable, Hashable, CaseIterable {
    /// With the silent push: the alert is the reliable path, shown whether or not the app
    /// finished in the background.
    case always
    /// Only the silent push at first; the alert `fallback_after_secs` later, unless the device
    /// acknowledged the wake `handled` before (`POST /api/v1/devices/{id}/acks`).
    case fallback
}

/// The answer to a wake: `202` with the jobs when pushed, `200` with a reason when not.
public struct WakeAnswer: Codable, Sendable, Hashable {
    /// Why no push was sent.
    public struct Reason: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The app is in the foreground (a heartbeat or a held presence stream): it was told on the stream.
        public static let present: Reason = "present"
        /// The same payment (or kind) was pushed moments ago; the pushes already sent stand.
        public static let recentlyWoken: Reason = "recently_woken"
    }

    public var pushed: Bool
    /// One job per push: two on iOS (silent, then alert), one on Android.
    public var jobIDs: [String]?
    public var reason: Reason?
    /// The wake's id, for `GET /api/v1/wake/{wake_id}`: the device's ack, once it sends one.
    public var wakeID: String?

    public init(pushed: Bool, jobIDs: [String]? = nil, reason: Reason? = nil, wakeID: String? = nil) {
        self.pushed = pushed
        self.jobIDs = jobIDs
        self.reason = reason
        self.wakeID = wakeID
    }

    enum CodingKeys: String, CodingKey {
        case pushed, reason
        case jobIDs = "job_ids"
        case wakeID = "wake_id"
    }
}

/// The data keys of a wake push, beside `aps` on iOS and under `data` on Android. They are the
/// keys the device plugin routes on, named as Blocktank's wake pushes name them.
public enum WakePushKey {
    /// The kind; `incoming_htlc_wake` on the silent push of an incoming HTLC.
    public static let type = "type"
    public static let paymentHash = "payment_hash"
    /// Decimal millisatoshis, as a string (FCM data values are strings).
    public static let amountMsat = "amount_msat"
    /// Unix seconds, as a string.
    public static let expiresAt = "expires_at"
    /// The wake's id: what the plugin acknowledges (`POST /api/v1/devices/{id}/acks`).
    public static let wakeID = "wake_id"
}

/// `POST /api/v1/devices/{id}/presence`: the app is in the foreground for the next `ttl_seconds`.
public struct PresenceHeartbeat: Codable, Sendable, Hashable {
    /// Seconds; 30 when absent, at most 300.
    public var ttlSeconds: Int?

    public init(ttlSeconds: Int? = nil) { self.ttlSeconds = ttlSeconds }

    public static let defaultTTL = 30
    public static let maximumTTL = 300

    enum CodingKeys: String, CodingKey { case ttlSeconds = "ttl_seconds" }
}

/// The answer to a heartbeat.
public struct PresenceAnswer: Codable, Sendable, Hashable {
    public var present: Bool
    /// The TTL granted, in seconds: heartbeat again before it runs out.
    public var ttlSeconds: Int

    public init(present: Bool, ttlSeconds: Int) {
        self.present = present
        self.ttlSeconds = ttlSeconds
    }

    enum CodingKeys: String, CodingKey {
        case present
        case ttlSeconds = "ttl_seconds"
    }
}

/// One server-sent event on `GET /api/v1/devices/{id}/presence/stream`: `event: wake` with this
/// as its `data`, sent instead of a push while the app holds the stream or heartbeats.
public struct PresenceWakeEvent: Codable, Sendable, Hashable {
    public var kind: WakeKind
    public var paymentHash: String?
    public var amountMsat: UInt64?

    public init(kind: WakeKind, paymentHash: String? = nil, amountMsat: UInt64? = nil) {
        self.kind = kind
        self.paymentHash = paymentHash
        self.amountMsat = amountMsat
    }

    enum CodingKeys: String, CodingKey {
        case kind
        case paymentHash = "payment_hash"
        case amountMsat = "amount_msat"
    }
}

/// `GET /api/v1/forwarding_hint?recipient=<device_id>&amount_msat=<n>`: whether a sender whose
/// payment failed should try again now, later or not at all.
public struct ForwardingHint: Codable, Sendable, Hashable {
    public enum Hint: String, Codable, Sendable, Hashable {
        /// The app is in the foreground: its node can take the payment now.
        case retryNow = "retry_now"
        /// The device was woken and is expected in `recommended_delay_ms`.
        case retryLater = "retry_later"
        /// No push can reach the device: retrying will not help.
        case doNotRetry = "do_not_retry"
    }

    /// Why, in one word. An open set.
    public struct Reason: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public static let present: Reason = "present"
        /// Woken, not yet present.
        public static let waking: Reason = "waking"
        /// Not present and not woken lately: wake it, then retry.
        public static let disconnected: Reason = "disconnected"
        public static let unknownDevice: Reason = "unknown_device"
        public static let tokenUnregistered: Reason = "token_unregistered"
    }

    public var hint: Hint
    public var reason: Reason
    public var recommendedDelayMs: Int?

    public init(hint: Hint, reason: Reason, recommendedDelayMs: Int? = nil) {
        self.hint = hint
        self.reason = reason
        self.recommendedDelayMs = recommendedDelayMs
    }

    enum CodingKeys: String, CodingKey {
        case hint, reason
        case recommendedDelayMs = "recommended_delay_ms"
    }
}

extension WakeKind {
    /// The alert a wake push shows when no extension rewrites it: Bitkit's wake-to-complete texts
    /// with "your wallet" for the app's name, which the server does not know. The extension
    /// normally replaces it with the app's own catalogue text.
    public var defaultAlert: NotificationText {
        switch self {
        case .incomingHtlc: NotificationText(title: "Payment Incoming", body: "Open your wallet now to receive - funds are being held")
        case .cjitPaymentArrived: NotificationText(title: "Payment Incoming", body: "Open your wallet now to receive via a new channel")
        case .orderPaymentConfirmed: NotificationText(title: "Channel Ready", body: "Open your wallet to complete setup")
        case .mutualClose: NotificationText(title: "Channel Closed", body: "Funds moved to savings")
        case .liquidityManagementRequest: NotificationText(title: "Channel Update", body: "Open your wallet so your LSP can rebalance your channel")
        case .expirySoon: NotificationText(title: "Action Needed", body: "Open your wallet now to avoid a channel closure")
        default: NotificationText(title: "Wallet activity", body: "Open your wallet to continue.")
        }
    }

    /// The `type` of the silent push: Blocktank's `incoming_htlc_wake` for an incoming HTLC, the
    /// kind itself otherwise.
    public var silentPushType: String {
        self == .incomingHtlc ? "incoming_htlc_wake" : rawValue
    }
}

/// How a device answered a wake.
public enum WakeAckOutcome: String, Codable, Sendable, Hashable, CaseIterable {
    /// Handled in the background: the fallback alert is cancelled.
    case handled
    /// The push reached the running app, which is working on it: a pending fallback alert waits
    /// the server's `wake_fallback_grace` from now for `handled`, since a silently woken app
    /// needs seconds to start its node and an alert meanwhile bothers the user for nothing.
    /// Ignored once another outcome is recorded.
    case received
    /// The app has no handler for the topic: recorded, the fallback still fires.
    case noHandler = "no_handler"
    /// Handling failed: recorded, the fallback still fires.
    case failed
}
