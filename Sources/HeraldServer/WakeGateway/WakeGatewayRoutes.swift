import Foundation
import HTTPTypes
import HeraldPush
import HeraldSecp256k1
import HeraldStore
import HeraldWake
import HeraldWire
import Hummingbird

/// Bitkit's wake gateway device API under `/wake` (bitkit-core `wake/client.rs`), so an app
/// built on bitkit-core points its gateway URL at `{public_url}/wake`: registration with
/// identity proofs, topics, presence, acks and unregistering, and the legacy `/api/device`
/// of deployed apps. The wakes themselves go through ``WakeService``.
struct WakeGatewayRoutes: Sendable {
    let wakes: WakeService
    let devices: any DeviceStore
    let keys: any APIKeyStore
    /// Where registration proofs are remembered, so each is taken once.
    let replays: any LSPS5Store
    /// `registration: challenge`: a device is confirmed by acknowledging its challenge wake.
    let challenges: any DeviceChallengeStore
    let ledger: any WakeLedgerStore
    let providers: PushRouter
    let settings: ServerSettings
    let limiter: RateLimiter
    let now: @Sendable () -> Date

    static let bodyLimit = 16 * 1024
    static let version = "herald-1"

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        let gateway = router.group("wake")
        gateway.get("v1/info") { _, _ in try info() }
        gateway.get("v1/topics") { _, _ in try topics() }
        gateway.post("v1/devices") { request, context in try await registerDevice(request, context: context) }
        gateway.put("v1/devices/self/topics") { request, _ in try await setTopics(request) }
        gateway.delete("v1/devices/self") { request, _ in try await unregister(request) }
        gateway.put("v1/presence") { request, _ in try await setPresence(request) }
        gateway.delete("v1/presence") { request, _ in try await clearPresence(request) }
        gateway.post("v1/acks") { request, _ in try await acknowledge(request) }
        gateway.post("api/device") { request, context in try await registerLegacy(request, context: context) }
    }

    var serverTime: Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    func info() throws -> Response {
        try JSONResponse.make(WakeServerInfo(audience: settings.wakeGatewayAudience, serverTime: serverTime, version: Self.version))
    }

    func topics() throws -> Response {
        let topics = settings.wakeGateway.topics.values.sorted { $0.name < $1.name }.map { topic in
            WakeTopicInfo(
                name: topic.name, description: topic.description, urgency: topic.urgency, deadlineSecs: topic.deadlineSeconds,
                alertable: topic.alertable, display: topic.text.map { WakeTopicInfo.Display(title: $0.title, body: $0.body) })
        }
        return try JSONResponse.make(WakeTopicList(topics: topics))
    }

    // MARK: Registration

    func registerDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await admit(request, context: context)
        var request = request
        let registration = try await Self.readBody(WakeRegistrationRequest.self, from: &request)
        let time = serverTime
        // In floating point: a `ts` near Int64's ends must not overflow the subtraction.
        guard abs(Double(time) - Double(registration.ts)) <= WakeRegistrationRequest.maximumSkew else {
            throw APIError(
                .staleTimestamp,
                "ts \(registration.ts) is not within \(Int(WakeRegistrationRequest.maximumSkew)) s of this server's clock (unix \(time)): check the phone's clock"
            )
        }
        let proven = try registration.validate(audience: settings.wakeGatewayAudience)
        try await IdentityClaims.takeOnce(
            registration.preimage(audience: settings.wakeGatewayAudience), signedAt: registration.ts, replays: replays, now: now())
        let platform: Platform = registration.platform == .apns ? .ios : .android
        let installKey = registration.app + "|" + registration.installID
        let (stored, unknown) = split(registration.canonicalTopics)
        var gateway = WakeGatewayDevice(
            installKey: installKey, secretSHA256: registration.secretSHA256, encryptionKey: registration.encryptionKey, envelope: 1,
            environment: registration.environment.rawValue, topics: stored, registeredTS: registration.ts)
        gateway.presentedSecretSHA256 = Self.presentedSecret(request)
        // `registration: challenge`: the device is confirmed like any other, by showing it got a
        // push at its token: the challenge wake's id, sealed to its key, acknowledged.
        let challenge = settings.registration == .challenge ? UUID().uuidString.lowercased() : nil
        let device = try await store(
            gateway, platform: platform, token: registration.pushToken, app: registration.app, identities: proven.map(\.description),
            challenge: challenge)
        if let challenge { try await pushChallenge(challenge, to: WakeGatewayEntry(device: device, gateway: gateway, isDead: false)) }
        return try JSONResponse.make(
            WakeRegistrationAnswer(
                deviceID: device.id, identities: proven.map(\.description), topics: stored, unknownTopics: unknown, serverTime: time),
            status: .created)
    }

    /// `POST /api/device`: the node signs `"bitkit-notifications" + deviceToken + isoTimestamp`;
    /// the token's form says the platform; `features` are the topics; v0 envelopes.
    func registerLegacy(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try await admit(request, context: context)
        // Its envelopes carry no wake id and its devices no secret to acknowledge with: it cannot
        // show that it receives pushes at its token.
        guard settings.registration != .challenge else {
            throw APIError(
                .forbidden,
                "registration: challenge confirms a device by the ack of a challenge wake, which the legacy route cannot give; register on /wake/v1/devices"
            )
        }
        var request = request
        let legacy = try await Self.readBody(WakeLegacyRegistration.self, from: &request)
        guard let node = NodeID(hex: legacy.nodeId), legacy.nodeId == node.hex else {
            throw APIError(.invalidRequest, "nodeId must be 66 lower-case hex digits of a compressed secp256k1 key")
        }
        guard legacy.publicKey.utf8.count == 66, NodeID(hex: legacy.publicKey)?.hex == legacy.publicKey else {
            throw APIError(.invalidRequest, "publicKey must be 66 lower-case hex digits of a compressed secp256k1 key")
        }
        guard let signedAt = ISOTimestamp.parse(legacy.isoTimestamp),
            abs(signedAt.timeIntervalSince(now())) <= WakeRegistrationRequest.maximumSkew
        else {
            throw APIError(.staleTimestamp, "isoTimestamp must be an ISO 8601 time within 600 s of the server's")
        }
        guard legacy.verifies() else {
            throw APIError(.invalidSignature, "signature is not nodeId's over \"bitkit-notifications\" + deviceToken + isoTimestamp")
        }
        try await IdentityClaims.takeOnce(
            WakeLegacyRegistration.message(deviceToken: legacy.deviceToken, isoTimestamp: legacy.isoTimestamp),
            signedAt: Int64(signedAt.timeIntervalSince1970.rounded(.down)), replays: replays, now: now())
        // The token's form: APNs tokens are hex, FCM's are not.
        let isAPNs = legacy.deviceToken.utf8.count >= 64 && legacy.deviceToken.utf8.allSatisfy(\.isHex)
        let platform: Platform = isAPNs ? .ios : .android
        let token = isAPNs ? legacy.deviceToken.lowercased() : legacy.deviceToken
        do {
            try PushTokenForm.check(token, platform: platform)
        } catch {
            throw APIError(.invalidRequest, "deviceToken is neither an APNs nor an FCM token")
        }
        let (stored, _) = split(Array(Set(legacy.features.filter(WakeTopicName.isName))).sorted())
        let gateway = WakeGatewayDevice(
            installKey: "legacy|" + token, secretSHA256: "", encryptionKey: legacy.publicKey, envelope: 0,
            environment: legacy.isProduction ? "production" : "sandbox", topics: stored,
            registeredTS: Int64(signedAt.timeIntervalSince1970.rounded(.down)))
        let identity = "ln:" + node.hex
        let device = try await store(gateway, platform: platform, token: token, app: "bitkit", identities: [identity])
        return try JSONResponse.make(
            WakeRegistrationAnswer(deviceID: device.id, identities: [identity], topics: stored, unknownTopics: [], serverTime: serverTime))
    }

    /// The registration mode holds here as on `POST /api/v1/devices`: under `registration: key`
    /// only a caller with a `devices` key registers (a phone's own gateway registration then goes
    /// through the app's backend), and every caller's address is rate-limited.
    private func admit(_ request: Request, context: HeraldRequestContext) async throws {
        if settings.registration == .key { try await APIKeyAuthenticator.check(request.headers, keys: keys, scope: .devices) }
        try limiter.admitRegistration(from: context.clientAddress)
    }

    /// Stores the device, its identities and its gateway row in one transaction, replacing the
    /// install's earlier registration if this one proves one of its identities or presents its secret.
    private func store(
        _ gateway: WakeGatewayDevice, platform: Platform, token: String, app name: String, identities: [String], challenge: String? = nil
    ) async throws -> Device {
        // A gateway app named like one of Herald's apps uses its credentials; any other, the default's.
        let app = providers.apps[name] != nil ? name : PushTarget.defaultApp
        guard providers.provider(for: platform, app: app) != nil else { throw APIError.platformNotConfigured(platform, app: app) }
        try await wakes.delivery.directory.admitIdentities(identities, token: token)
        do {
            // Whether it may replace the install's registration is decided in the store, in the
            // write's own transaction: the later of two registrations by Herald's clock wins.
            return try await devices.registerDevice(
                platform: platform, token: token, sealKey: nil, app: app,
                extras: DeviceExtras(identities: identities, challengeHash: challenge.map(Secrets.hash), wakeGateway: gateway), now: now()
            ).device
        } catch is WakeGatewayInstallTaken {
            throw APIError(
                .installTaken,
                "this install is registered with other identities: register proving one of them, or with the install's wkd_ secret as Bearer")
        }
    }

    /// SHA-256 of the `wkd_` secret a registration presents as `Authorization: Bearer`, if any:
    /// the install's own secret lets a registration replace it without proving its identities.
    static func presentedSecret(_ request: Request) -> String? {
        let header = request.headers[.authorization] ?? ""
        let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
        return WakeDeviceSecret.hasForm(token) ? WakeDeviceSecret.sha256(token) : nil
    }

    /// The topic of challenge wakes: a background wake whose id the app acknowledges.
    static let challengeTopic = WakeGatewayTopic(name: "herald.challenge", urgency: .background, deadlineSeconds: 600)

    /// The challenge wake: sealed to the device's key like any wake, its id the one-time code.
    func pushChallenge(_ code: String, to entry: WakeGatewayEntry) async throws {
        let moment = now()
        let push = try wakes.gatewayPush(
            for: entry, wakeID: code, topic: Self.challengeTopic,
            deadline: Int64(moment.timeIntervalSince1970.rounded(.down)) + Int64(Self.challengeTopic.deadlineSeconds), payload: nil,
            collapseID: nil, now: moment)
        _ = try await wakes.delivery.submit(
            push, type: "wake:" + Self.challengeTopic.name, to: [wakes.delivery.directory.challengeRecipient(entry.device)],
            metric: NotificationType.deviceChallenge.rawValue)
    }

    /// Known names and every pattern are stored; unknown exact names are answered back.
    func split(_ topics: [String]) -> (stored: [String], unknown: [String]) {
        var stored: [String] = []
        var unknown: [String] = []
        for topic in topics {
            if WakeTopicName.isPattern(topic) || settings.wakeGateway.topics[topic] != nil { stored.append(topic) } else { unknown.append(topic) }
        }
        return (stored, unknown)
    }

    // MARK: The device's routes

    /// The device whose `Authorization: Bearer wkd_…` this is; 401 for anything else.
    func authenticate(_ request: Request) async throws -> WakeGatewayEntry {
        let header = request.headers[.authorization] ?? ""
        let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
        guard WakeDeviceSecret.hasForm(token) else {
            throw APIError.unauthorized("Authorization must be Bearer and the device's wkd_ secret")
        }
        let entry: WakeGatewayEntry? = try await ledger.wakeGatewayDevice(secretSHA256: WakeDeviceSecret.sha256(token))
        guard let entry else { throw APIError.unauthorized("no device holds this secret (unregistered, replaced, or never registered)") }
        return entry
    }

    func setTopics(_ request: Request) async throws -> Response {
        let entry = try await authenticate(request)
        var request = request
        let body = try await Self.readBody(WakeTopicsBody.self, from: &request)
        guard body.topics.count <= WakeTopicName.maximumPerDevice else {
            throw APIError(.invalidRequest, "at most \(WakeTopicName.maximumPerDevice) topics")
        }
        if let bad = body.topics.first(where: { !WakeTopicName.isValid($0) }) {
            throw APIError(.invalidRequest, "topic \(bad.prefix(80)) is neither a name (namespace.Name) nor a pattern (namespace.*)")
        }
        let (stored, unknown) = split(WakeRegistrationRequest.canonical(body.topics))
        try await ledger.setWakeGatewayTopics(deviceID: entry.device.id, topics: stored, now: now())
        return try JSONResponse.make(WakeTopicsBody(topics: stored, unknownTopics: unknown))
    }

    func unregister(_ request: Request) async throws -> Response {
        let entry = try await authenticate(request)
        try await devices.deleteDevice(id: entry.device.id, now: now())
        wakes.presence.leave(deviceID: entry.device.id)
        return Response(status: .noContent)
    }

    func setPresence(_ request: Request) async throws -> Response {
        let entry = try await authenticate(request)
        var request = request
        let body = try await Self.readBody(WakePresenceBody.self, from: &request)
        let ttl = min(max(body.ttlSecs, WakePresenceBody.ttlRange.lowerBound), WakePresenceBody.ttlRange.upperBound)
        let moment = now()
        wakes.presence.heartbeat(deviceID: entry.device.id, ttl: TimeInterval(ttl), now: moment)
        return try JSONResponse.make(WakePresenceAnswer(expiresAt: Int64(moment.timeIntervalSince1970.rounded(.down)) + Int64(ttl)))
    }

    func clearPresence(_ request: Request) async throws -> Response {
        let entry = try await authenticate(request)
        wakes.presence.leave(deviceID: entry.device.id)
        return Response(status: .noContent)
    }

    func acknowledge(_ request: Request) async throws -> Response {
        let entry = try await authenticate(request)
        var request = request
        let ack = try await Self.readBody(WakeAck.self, from: &request)
        guard let id = UUID(uuidString: ack.id) else { throw APIError(.invalidRequest, "id must be the wake's UUID") }
        let wakeID = id.uuidString.lowercased()
        if try await wakes.acknowledge(wakeID: wakeID, deviceID: entry.device.id, outcome: ack.outcome) != nil {
            return Response(status: .noContent)
        }
        // The challenge wake's id, whatever the outcome: the app opened a push sent to its token.
        let confirmed: Bool = try await challenges.confirmChallenge(deviceID: entry.device.id, codeHash: Secrets.hash(wakeID), now: now())
        guard confirmed else { throw APIError(.unknownWake, "no wake with this id was delivered to this device") }
        return Response(status: .noContent)
    }

    /// The body as `T`; anything unreadable is `400 invalid_request`, as the gateway answers.
    static func readBody<T: Decodable>(_ type: T.Type, from request: inout Request) async throws -> T {
        do {
            return try await Edge.readJSONBody(T.self, from: &request, limit: bodyLimit)
        } catch let error as APIError where error.code == .invalidJSON || error.code == .invalidBody {
            throw APIError(.invalidRequest, error.message)
        }
    }
}
