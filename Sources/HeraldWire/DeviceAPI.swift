/// `POST /api/v1/devices`: an app trades its push token for a webhook alias.
public struct DeviceRegistrationRequest: Codable, Sendable, Hashable {
    /// `ios`, `android` or `webpush`. Text rather than ``Platform``, so the server can name a
    /// wrong value in its error instead of failing to decode the body.
    public var platform: String
    /// The APNs device token or FCM registration token; absent for `webpush`.
    public var pushToken: String?
    /// The Web Push subscription (`PushSubscription.toJSON()`, a UnifiedPush endpoint and keys):
    /// required for `webpush`, absent otherwise.
    public var subscription: WebPushSubscription?
    /// `webpush` only: true asks for visible pushes in WebKit's declarative form
    /// (``DeclarativeWebPushMessage``); absent or false keeps the plain data map.
    public var declarative: Bool?
    /// Base64 (or base64url) of the device's 32-byte X25519 public key: with one, every push to
    /// the device is sealed to it (``SealedPush``). Text, so the server can name a bad value.
    public var sealKey: String?
    /// The app the token belongs to (`com.example.wallet`), as named in Herald's configuration;
    /// absent means `default`, the app of a single-app deployment.
    public var app: String?
    /// The node id of the LSP that wakes this device through LSPS5 (bLIP-55): 66 hex digits of a
    /// compressed secp256k1 key. With one, every LSPS5 notification must be signed by that node.
    public var lspNodeID: String?
    /// Identities the device proves it holds (``DeviceIdentityClaim``): pushes addressed to an
    /// identity (a Breez Spark payment webhook's `ln:<user_pubkey>`) reach it.
    public var identities: [String]?
    public var proofs: [IdentityProofBody]?
    /// Unix seconds the proofs were signed at; within 600 s of the server's clock.
    public var ts: Int64?
    /// iOS: what Herald needs to start a swap's Live Activity by push.
    public var liveActivity: LiveActivityRegistration?

    public init(
        platform: String, pushToken: String?, subscription: WebPushSubscription? = nil, declarative: Bool? = nil,
        sealKey: String? = nil, app: String? = nil, lspNodeID: String? = nil, identities: [String]? = nil,
        proofs: [IdentityProofBody]? = nil, ts: Int64? = nil
    ) {
        self.platform = platform
        self.pushToken = pushToken
        self.subscription = subscription
        self.declarative = declarative
        self.sealKey = sealKey
        self.app = app
        self.lspNodeID = lspNodeID
        self.identities = identities
        self.proofs = proofs
        self.ts = ts
    }

    enum CodingKeys: String, CodingKey {
        case platform
        case pushToken = "push_token"
        case subscription, declarative
        case sealKey = "seal_key"
        case app
        case lspNodeID = "lsp_node_id"
        case identities, proofs, ts
        case liveActivity = "live_activity"
    }
}

/// One identity's proof: `sig` by that identity's key over ``DeviceIdentityClaim/preimage``.
/// For `ln:` an LN signed message (zbase32, as Breez SDKs' `sign_message` and lnd's
/// `signmessage` write it); for `pk:` 128 hex digits of an Ed25519 signature.
public struct IdentityProofBody: Codable, Sendable, Hashable {
    public var identity: String
    public var sig: String
    public init(identity: String, sig: String) {
        self.identity = identity
        self.sig = sig
    }
}

/// What every proof of a registration signs: the deployment it is for (its host), the device's
/// platform, its token as sent (a Web Push subscription's endpoint), its identities and the time.
/// The audience keeps a registration captured at one deployment from registering at another.
public enum DeviceIdentityClaim {
    public static let tag = "herald-identity-v1"

    /// `herald-identity-v1\naudience:…\nplatform:…\npush_token:…\nidentities:<sorted, comma-joined>\nts:…`,
    /// UTF-8, no trailing newline. Identities are sorted bytewise and deduplicated.
    public static func preimage(audience: String, platform: String, pushToken: String, identities: [String], ts: Int64) -> String {
        let sorted = Array(Set(identities)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return
            "\(tag)\naudience:\(audience)\nplatform:\(platform)\npush_token:\(pushToken)\nidentities:\(sorted.joined(separator: ","))\nts:\(ts)"
    }
}

/// `PUT /api/v1/devices/{device_id}`: the OS rotated the push token (or the distributor the Web
/// Push endpoint). Without `platform` the device keeps its own.
public struct DeviceTokenUpdate: Codable, Sendable, Hashable {
    public var platform: String?
    /// The new token; absent for `webpush`.
    public var pushToken: String?
    /// The new Web Push subscription; required for `webpush`, absent otherwise.
    public var subscription: WebPushSubscription?
    /// `webpush` only: WebKit's declarative form for visible pushes, or not; absent keeps the
    /// device's choice, for a rotated subscription too.
    public var declarative: Bool?
    /// A new seal key; absent (or `null`) keeps the current one, `""` removes it and pushes go
    /// out in clear again.
    public var sealKey: String?
    /// A new LSP node id; absent (or `null`) keeps the current one, `""` removes it and LSPS5
    /// notifications are taken unverified again.
    public var lspNodeID: String?
    /// New identities, proven as at registration; absent keeps the current ones, `[]` (with no
    /// proofs) removes them.
    public var identities: [String]?
    public var proofs: [IdentityProofBody]?
    public var ts: Int64?
    /// iOS: what Herald needs to start a swap's Live Activity by push.
    public var liveActivity: LiveActivityRegistration?

    public init(
        platform: String? = nil, pushToken: String?, subscription: WebPushSubscription? = nil, declarative: Bool? = nil,
        sealKey: String? = nil, lspNodeID: String? = nil, identities: [String]? = nil, proofs: [IdentityProofBody]? = nil,
        ts: Int64? = nil
    ) {
        self.platform = platform
        self.pushToken = pushToken
        self.subscription = subscription
        self.declarative = declarative
        self.sealKey = sealKey
        self.lspNodeID = lspNodeID
        self.identities = identities
        self.proofs = proofs
        self.ts = ts
    }

    enum CodingKeys: String, CodingKey {
        case platform
        case pushToken = "push_token"
        case subscription, declarative
        case sealKey = "seal_key"
        case lspNodeID = "lsp_node_id"
        case identities, proofs, ts
        case liveActivity = "live_activity"
    }
}

/// The answer to a registration or an update. The secret is shown once, on registration.
public struct DeviceRegistrationAnswer: Codable, Sendable, Hashable {
    public var deviceID: String
    public var deviceSecret: String?
    public var alias: String
    /// The URL to give the wallet SDK (`register_webhook`): it carries the alias, not the token.
    public var webhookURL: String
    /// The id of the key pushes are sealed to (``SealPublicKey/keyID``); absent when they are not.
    public var sealKeyID: String?
    /// The app whose credentials push to the device.
    public var app: String?
    /// The LSP node id LSPS5 notifications are checked against (lower-case hex); absent when none.
    public var lspNodeID: String?
    /// The identities the device proved; absent when none.
    public var identities: [String]?
    /// `registration: challenge` only: false while the challenge push's code has not come back
    /// (the alias pushes nothing else until then). Absent in the other modes.
    public var confirmed: Bool?

    public init(
        deviceID: String, deviceSecret: String?, alias: String, webhookURL: String, sealKeyID: String? = nil,
        app: String? = nil, lspNodeID: String? = nil, identities: [String]? = nil, confirmed: Bool? = nil
    ) {
        self.identities = identities
        self.confirmed = confirmed
        self.deviceID = deviceID
        self.deviceSecret = deviceSecret
        self.alias = alias
        self.webhookURL = webhookURL
        self.sealKeyID = sealKeyID
        self.app = app
        self.lspNodeID = lspNodeID
    }

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case deviceSecret = "device_secret"
        case alias
        case webhookURL = "webhook_url"
        case sealKeyID = "seal_kid"
        case app
        case lspNodeID = "lsp_node_id"
        case identities, confirmed
    }
}

/// `GET /api/v1/devices/{device_id}/pushes`: what the local development provider recorded for
/// the device, oldest first, for a development phone to handle as if it had received them.
public struct LocalPushFeed: Codable, Sendable, Hashable {
    public struct Item: Codable, Sendable, Hashable {
        public var seq: Int64
        public var platform: Platform
        /// The push as the device would get it: APNs `userInfo` or the FCM data map.
        public var payload: JSONValue

        public init(seq: Int64, platform: Platform, payload: JSONValue) {
            self.seq = seq
            self.platform = platform
            self.payload = payload
        }
    }

    public var pushes: [Item]
    /// The `after` to ask with next.
    public var next: Int64

    public init(pushes: [Item], next: Int64) {
        self.pushes = pushes
        self.next = next
    }
}

/// `GET /api/v1/webpush/vapid-public-key`: the key an app passes to `pushManager.subscribe`
/// (`applicationServerKey`) or to its UnifiedPush connector, so that push services take only
/// Herald's messages for its subscriptions.
public struct VAPIDPublicKeyAnswer: Codable, Sendable, Hashable {
    /// The uncompressed P-256 public key (65 bytes), base64url without padding.
    public var publicKey: String
    /// The app whose key it is.
    public var app: String

    public init(publicKey: String, app: String) {
        self.publicKey = publicKey
        self.app = app
    }

    enum CodingKeys: String, CodingKey {
        case publicKey = "public_key"
        case app
    }
}

/// The data of a `herald_challenge` push: the code the app posts back to `confirm_url`
/// (``DeviceConfirmation``) to prove it received a push at its token.
public struct DeviceChallenge: Codable, Sendable, Hashable {
    public var code: String
    public var confirmURL: String
    public init(code: String, confirmURL: String) {
        self.code = code
        self.confirmURL = confirmURL
    }
    enum CodingKeys: String, CodingKey {
        case code
        case confirmURL = "confirm_url"
    }
}

/// `POST /api/v1/devices/{device_id}/confirm`: the challenge's code, back from the device.
public struct DeviceConfirmation: Codable, Sendable, Hashable {
    public var code: String
    public init(code: String) { self.code = code }
}
