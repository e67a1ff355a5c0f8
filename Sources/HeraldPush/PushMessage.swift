import Foundation
import HeraldWire

/// One notification to one device, independent of the push service that carries it.
///
/// The providers render it to their own wire format: APNs puts `data` beside `aps`, FCM puts it
/// under `message.data` (every value a string).
public struct PushMessage: Codable, Hashable, Sendable {
    /// How the push should behave on the device.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// A visible alert with `mutable-content: 1`, so the iOS extension runs and may rewrite it.
        /// APNs push type `alert`, priority 10; FCM `android.priority: HIGH`.
        case wake
        /// `content-available: 1` only: best-effort background delivery.
        /// APNs push type `background`, priority 5; FCM `android.priority: NORMAL`.
        case background
        /// A plain visible alert (a wallet backend's message), not rewritten by an extension.
        case alert
    }

    /// Android `notification` options (channel, sound, colour, icon), coded as FCM's
    /// `android.notification` wants them.
    public struct AndroidNotification: Codable, Hashable, Sendable {
        public var channelID: String?
        public var sound: String?
        public var color: String?
        public var icon: String?
        public init(channelID: String? = nil, sound: String? = nil, color: String? = nil, icon: String? = nil) {
            self.channelID = channelID
            self.sound = sound
            self.color = color
            self.icon = icon
        }
        enum CodingKeys: String, CodingKey {
            case channelID = "channel_id"
            case sound, color, icon
        }
    }

    public var kind: Kind
    /// The data keys (for Herald's webhook pushes: `notification_type`, `notification_payload`, `app_data`).
    public var data: [String: String]
    /// The visible text. Wake pushes always carry one (the extension replaces it);
    /// background pushes never do.
    public var alert: NotificationText?
    public var sound: String?
    public var badge: Int?
    /// APNs `category` (notification actions).
    public var category: String?
    /// APNs `interruption-level` (`time-sensitive` …).
    public var interruptionLevel: String?
    /// Pushes with the same collapse id replace each other on the device.
    public var collapseID: String?
    /// After this moment the push service should stop trying to deliver.
    public var expiresAt: Date?
    public var android: AndroidNotification?
    /// Pushes to the same device written to the push service before this one, on the same
    /// connection, in order: a wake's silent push ahead of its alert. Best effort: their outcome
    /// never holds up or stops this push, and this push's outcome is the job's.
    public var prelude: [PushMessage]?
    /// A push rendered elsewhere, byte for byte (the wake gateway's, `HeraldWake`): APNs and FCM
    /// send it as it is, and the fields above only name it in logs and metrics.
    public var verbatim: Verbatim?

    /// A request body and its APNs headers, as another protocol requires them exactly.
    public struct Verbatim: Codable, Hashable, Sendable {
        /// APNs: the `apns-*` headers in order. `apns-topic` is the provider's own, sent first.
        public var apnsHeaders: [[String]]?
        /// APNs: the body; FCM: the whole `messages:send` body, token included.
        public var body: String

        public init(apnsHeaders: [[String]]? = nil, body: String) {
            self.apnsHeaders = apnsHeaders
            self.body = body
        }

        /// An APNs request; `apns-topic` left nil is the provider's own.
        public init(apns: APNsHeaders, body: String) {
            self.init(apnsHeaders: apns.fields, body: body)
        }

        /// What the app is handed, for the local development provider: the body on APNs, the
        /// `message.data` map on FCM. Derived when asked, so no job stores it twice.
        public var received: Data {
            guard apnsHeaders == nil else { return Data(body.utf8) }
            guard let data = (try? JSONParser.parse(Array(body.utf8)))?["message"]?["data"] else { return Data("{}".utf8) }
            var writer = JSONWriter()
            writer.value(data)
            return writer.data
        }
    }

    public init(
        kind: Kind,
        data: [String: String],
        alert: NotificationText? = nil,
        sound: String? = nil,
        badge: Int? = nil,
        category: String? = nil,
        interruptionLevel: String? = nil,
        collapseID: String? = nil,
        expiresAt: Date? = nil,
        android: AndroidNotification? = nil,
        prelude: [PushMessage]? = nil,
        verbatim: Verbatim? = nil
    ) {
        self.kind = kind
        self.data = data
        self.alert = alert
        self.sound = sound
        self.badge = badge
        self.category = category
        self.interruptionLevel = interruptionLevel
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.android = android
        self.prelude = prelude
        self.verbatim = verbatim
    }

    /// The generic text a wake push shows when no extension rewrites it (an old app version,
    /// an extension that crashed): the user still learns there is something to open.
    public static let genericWakeAlert = NotificationText(title: "Wallet activity", body: "Open your wallet to continue.")

    /// The push for a Breez-style webhook event.
    public static func wake(_ pushData: PushData, collapseID: String? = nil, expiresAt: Date? = nil) -> PushMessage {
        PushMessage(
            kind: .wake,
            data: pushData.dataMap,
            alert: genericWakeAlert,
            collapseID: collapseID,
            expiresAt: expiresAt
        )
    }
}

/// The address of one device at one push service, or of one of the outbox's other destinations.
public struct PushTarget: Codable, Hashable, Sendable {
    public var destination: JobDestination
    public var token: String
    /// The app the token belongs to: which credentials (APNs key and topic, FCM service
    /// account) send to it. ``defaultApp`` when a deployment serves one app.
    public var app: String

    public init(destination: JobDestination, token: String, app: String = PushTarget.defaultApp) {
        self.destination = destination
        self.token = token
        self.app = app
    }

    /// A device's address.
    public init(platform: Platform, token: String, app: String = PushTarget.defaultApp) {
        self.init(destination: .device(platform), token: token, app: app)
    }

    /// The app of a single-app deployment, and of devices that name none.
    public static let defaultApp = "default"

    /// The longest token any push service issues, with room to spare: a longer one is a
    /// client's mistake, refused before a service sees it.
    public static let maximumTokenBytes = 4096

    /// The token shortened for logs: enough to correlate, never enough to push.
    public var redactedToken: String { redact(token) }

    /// How a person recognises the target: a Web Push subscription by its push service's host
    /// (its stored form starts `{"endp…`, which says nothing), any other token shortened.
    public static func shown(destination: JobDestination, token: String) -> String {
        guard destination == .device(.webpush) else { return redact(token) }
        guard let endpoint = WebPushSubscription(storageToken: token)?.endpoint, let host = URLComponents(string: endpoint)?.host else {
            return "web push"
        }
        return "web push via \(host)"
    }
}

/// Shortens a secret for logs and errors.
public func redact(_ secret: String) -> String {
    secret.count <= 8 ? "…" : String(secret.prefix(6)) + "…"
}
