import Foundation
import HTTPTypes
import HeraldPush
import HeraldSecp256k1
import HeraldStore
import HeraldWire
import Hummingbird
import NIOConcurrencyHelpers
import ServiceLifecycle

/// App registration: the app trades its push token for an alias webhook URL, so third-party
/// services never see the real token, and a device secret to rotate or delete it later.
struct DeviceRoutes: Sendable {
    let devices: any DeviceStore
    let localPushes: any LocalPushStore
    /// `registration: key`: the keys allowed to register.
    let keys: any APIKeyStore
    /// `registration: challenge`: the codes devices post back.
    let challenges: any DeviceChallengeStore
    /// Where identity proofs are remembered, so each is taken once.
    let replays: any LSPS5Store
    /// The challenge push.
    let delivery: PushDelivery
    let settings: ServerSettings
    /// Which apps are configured: a device names one of them.
    let providers: PushRouter
    let limiter: RateLimiter
    let now: @Sendable () -> Date
    /// Paces the push feed's long poll.
    let clock: any Clock<Duration>
    /// The wake gateway's devices: their feed takes the `wkd_` secret they registered with.
    var ledger: (any WakeLedgerStore)? = nil
    /// Push-to-start tokens of swaps' Live Activities (`live_activity`).
    var liveActivities: (any LiveActivityStore)? = nil
    /// A deleted device's BIP-353 record leaves the zone.
    var bip353: Bip353Names? = nil

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("devices") { request, context in try await create(request, context: context) }
        router.put("devices/:id") { request, context in try await update(request, context: context) }
        router.delete("devices/:id") { request, context in try await delete(request, context: context) }
        router.post("devices/:id/confirm") { request, context in try await confirm(request, context: context) }
        router.get("webpush/vapid-public-key") { request, _ in try vapidPublicKey(request) }
        if settings.localProvider {
            router.get("devices/:id/pushes") { request, context in try await pushes(request, context: context) }
        }
    }

    func create(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        // `registration: key`: only the app's backend, with a key of scope `devices`, registers.
        if settings.registration == .key { try await APIKeyAuthenticator.check(request.headers, keys: keys, scope: .devices) }
        try limiter.admitRegistration(from: context.clientAddress)
        var request = request
        let body = try await Self.readBody(DeviceRegistrationRequest.self, from: &request)
        let platform = try Edge.parsePlatform(body.platform)
        try Self.checkDeclarative(body.declarative, platform: platform)
        var subscription = body.subscription
        subscription?.declarative = body.declarative ?? false
        let token = try await Edge.pushAddress(
            platform: platform, pushToken: body.pushToken, subscription: subscription, policy: settings.registrationWebPushPolicy)
        let sealKey = try body.sealKey.map(PushSealing.parse)
        let app = try Edge.checkApp(body.app, providers: providers)
        try requireProvider(platform, app: app)
        let lspNodeID = try body.lspNodeID.map(Self.parseNodeID)
        let startToken = try body.liveActivity.map { try Self.pushToStartToken($0, platform: platform) }
        let proven = try IdentityClaims.proven(
            audience: settings.wakeGatewayAudience, platform: platform, pushToken: body.subscription?.endpoint ?? body.pushToken ?? "",
            identities: body.identities, proofs: body.proofs, ts: body.ts, now: now())
        if let proven { try await delivery.directory.admitIdentities(proven, token: token) }
        if let proven, !proven.isEmpty, let ts = body.ts {
            let signed = DeviceIdentityClaim.preimage(
                audience: settings.wakeGatewayAudience, platform: platform.rawValue, pushToken: body.subscription?.endpoint ?? body.pushToken ?? "",
                identities: proven, ts: ts)
            try await IdentityClaims.takeOnce(signed, signedAt: ts, replays: replays, now: now())
        }
        let code = settings.registration == .challenge ? Secrets.random(bytes: 16) : nil
        // One write: the device, its LSP, its identities and its challenge, or none of them.
        let registration = try await devices.registerDevice(
            platform: platform, token: token, sealKey: sealKey, app: app,
            extras: DeviceExtras(lspNodeID: lspNodeID?.hex, identities: proven ?? [], challengeHash: code.map(Secrets.hash)),
            now: now()
        )
        if let startToken, let liveActivities {
            try await liveActivities.setLiveActivityStartToken(deviceID: registration.device.id, token: startToken, now: now())
        }
        if let code { try await pushChallenge(code, to: registration.device) }
        return try JSONResponse.make(
            DeviceRegistrationAnswer(
                deviceID: registration.device.id,
                deviceSecret: registration.secret,
                alias: registration.device.alias,
                webhookURL: delivery.directory.webhookURL(registration.device),
                sealKeyID: sealKey?.keyID,
                app: app,
                lspNodeID: lspNodeID?.hex,
                identities: proven?.isEmpty == false ? proven : nil,
                // Said outright: until the code comes back the alias pushes nothing else.
                confirmed: code == nil ? nil : false
            ),
            status: .created
        )
    }

    func update(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        var request = request
        let body = try await Self.readBody(DeviceTokenUpdate.self, from: &request)
        // Only what is given changes: an LSP node id alone, identities alone, a token alone.
        let namesToken = body.platform != nil || body.pushToken != nil || body.subscription != nil
        guard
            namesToken || body.declarative != nil || body.sealKey != nil || body.lspNodeID != nil || body.identities != nil
                || body.liveActivity != nil
        else {
            throw APIError.invalidBody(
                "name at least one of push_token (or subscription), declarative, seal_key, lsp_node_id, identities, live_activity")
        }
        let platform = try body.platform.map(Edge.parsePlatform) ?? device.platform
        let startToken = try body.liveActivity.map { try Self.pushToStartToken($0, platform: platform) }
        try Self.checkDeclarative(body.declarative, platform: platform)
        if namesToken { try requireProvider(platform, app: device.app) }
        // The device's choice of form carries over to a rotated subscription unless this says otherwise.
        let current = device.platform == .webpush ? WebPushSubscription(storageToken: device.token) : nil
        let declarative = body.declarative ?? current?.declarative ?? false
        var subscription = body.subscription
        subscription?.declarative = declarative
        var token = device.token
        if namesToken {
            token = try await Edge.pushAddress(
                platform: platform, pushToken: body.pushToken, subscription: subscription, policy: settings.registrationWebPushPolicy)
        } else if body.declarative != nil, platform == .webpush, var reformatted = current {
            reformatted.declarative = declarative
            token = reformatted.storageToken
        }
        // What identity proofs sign: the token as sent, or the device's own when none was.
        let signedToken =
            body.subscription?.endpoint ?? body.pushToken
            ?? (platform == .webpush ? WebPushSubscription(storageToken: device.token)?.endpoint ?? device.token : device.token)
        // Absent keeps the key; "" removes it.
        let sealKey = try body.sealKey.map(PushSealing.parseUpdate)
        // Absent keeps the node id; "" removes it.
        let lspNodeID = try body.lspNodeID.map { $0.isEmpty ? Optional<NodeID>.none : try Self.parseNodeID($0) }
        let proven = try IdentityClaims.proven(
            audience: settings.wakeGatewayAudience, platform: platform, pushToken: signedToken, identities: body.identities,
            proofs: body.proofs, ts: body.ts, now: now())
        if let proven { try await delivery.directory.admitIdentities(proven, deviceID: device.id, token: token) }
        if let proven, !proven.isEmpty, let ts = body.ts {
            let signed = DeviceIdentityClaim.preimage(
                audience: settings.wakeGatewayAudience, platform: platform.rawValue, pushToken: signedToken, identities: proven, ts: ts)
            try await IdentityClaims.takeOnce(signed, signedAt: ts, replays: replays, now: now())
        }
        // `registration: challenge`: a new token is proven anew, by a one-time code pushed to it.
        // Until the code comes back the alias pushes nothing else.
        // A subscription whose form alone changed still reaches the same place: not a move.
        let moved = Self.address(token) != Self.address(device.token) || platform != device.platform
        let code = settings.registration == .challenge && moved ? Secrets.random(bytes: 16) : nil
        // One write: the token, its challenge, the seal key, the LSP and the identities, or none of them.
        let stored = try await devices.updateDevice(
            id: device.id,
            changes: DeviceChanges(
                pushToken: namesToken || token != device.token ? .set(DeviceChanges.PushToken(platform: platform, token: token)) : .keep,
                sealKey: sealKey.map { .set($0) } ?? .keep,
                lspNodeID: lspNodeID.map { .set($0?.hex) } ?? .keep,
                // A new token holds no identity until the same request proves it over that token:
                // a device secret alone must not carry an identity's pushes to another phone.
                identities: proven.map { .set($0) } ?? (moved ? .set([]) : .keep),
                challengeHash: code.map { .set(Secrets.hash($0)) } ?? .keep),
            now: now())
        if let startToken, let liveActivities {
            try await liveActivities.setLiveActivityStartToken(deviceID: device.id, token: startToken, now: now())
        }
        var updated = device
        updated.platform = platform
        if let code {
            // Sealed to the key the device had before this update, as it always was.
            updated.token = token
            try await pushChallenge(code, to: updated)
        }
        // The identities as proven (sorted by their bytes), else as the store holds them.
        let held = proven ?? stored.identities
        return try JSONResponse.make(
            DeviceRegistrationAnswer(
                deviceID: device.id, deviceSecret: nil, alias: device.alias, webhookURL: delivery.directory.webhookURL(updated),
                sealKeyID: (sealKey ?? device.sealKey)?.keyID, app: device.app, lspNodeID: stored.lspNodeID,
                identities: held.isEmpty ? nil : held,
                confirmed: settings.registration == .challenge ? !(try await challenges.isUnconfirmed(deviceID: device.id)) : nil
            )
        )
    }

    /// A push-to-start token, checked as an APNs token: Live Activities are iOS's.
    static func pushToStartToken(_ registration: LiveActivityRegistration, platform: Platform) throws -> String {
        guard platform == .ios else {
            throw APIError(.invalidRequest, "live_activity is for iOS devices; this one is \(platform.rawValue)")
        }
        return try Edge.checkPushToken(registration.pushToStartToken, platform: .ios, field: "live_activity.push_to_start_token")
    }

    /// The challenge push: the code, and where to post it back.
    func pushChallenge(_ code: String, to device: Device) async throws {
        let body = DeviceChallenge(code: code, confirmURL: "\(settings.publicURL)/api/v1/devices/\(device.id)/confirm")
        let data = PushData(notificationType: .deviceChallenge, notificationPayload: try WireJSON.encodeString(body))
        let message = PushMessage(
            kind: .wake, data: data.dataMap, alert: PushMessage.genericWakeAlert,
            expiresAt: now().addingTimeInterval(settings.jobTTL.timeInterval))
        _ = try await delivery.submit(
            message, type: NotificationType.deviceChallenge.rawValue,
            to: [delivery.directory.challengeRecipient(device)],
            metric: NotificationType.deviceChallenge.rawValue)
    }

    /// `POST /api/v1/devices/{id}/confirm`: the code from the challenge push, proving the app
    /// holds the token. The code is the credential: the plugin posts it as it would a reply.
    func confirm(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id") else { throw APIError.notFound("no device id") }
        var request = request
        let body = try await Edge.readJSONBody(DeviceConfirmation.self, from: &request)
        guard !body.code.isEmpty, body.code.utf8.count <= 64,
            try await challenges.confirmChallenge(deviceID: id, codeHash: Secrets.hash(body.code), now: now())
        else {
            throw APIError(.invalidCode, "not this device's challenge code")
        }
        return try JSONResponse.make(["confirmed": true])
    }

    /// The app's VAPID public key, which its subscriptions must be made with.
    func vapidPublicKey(_ request: Request) throws -> Response {
        let app = try Edge.checkApp(request.uri.queryParameters.get("app"), providers: providers)
        guard let provider = providers.provider(for: .webpush, app: app) as? WebPushProvider else {
            throw APIError(
                .notConfigured,
                "Web Push is not configured" + (app == PushTarget.defaultApp ? "" : " for app '\(app)'")
                    + ": set webpush.vapid_key_file and webpush.contact")
        }
        return try JSONResponse.make(VAPIDPublicKeyAnswer(publicKey: provider.signer.publicKey, app: app))
    }

    func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        // Before the device goes: its name's record is found by the device.
        try await bip353?.released(deviceID: device.id)
        try await devices.deleteDevice(id: device.id, now: now())
        return Response(status: .noContent)
    }

    /// The local development provider's pushes for this device, long-polled: a development
    /// phone (`herald-device listen`) reads them as a real one would receive them.
    func pushes(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device: Device
        if let ledger, let secret = Edge.bearerCredential(request.headers), WakeDeviceSecret.hasForm(secret) {
            guard let entry = try await ledger.wakeGatewayDevice(secretSHA256: WakeDeviceSecret.sha256(secret)),
                entry.device.id == context.parameters.get("id")
            else { throw APIError.unauthorized("unknown device or wrong device secret") }
            device = entry.device
        } else {
            device = try await authenticate(request, context: context)
        }
        // The feed stands in for the push service, which delivers to whoever holds the token:
        // the first device registered with it, not whoever registers it after.
        guard try await localPushes.feedOwner(platform: device.platform, token: device.token) == device.id else {
            throw APIError(.tokenRegisteredElsewhere, "another device registered this push token first; its pushes are that device's")
        }
        let query = request.uri.queryParameters
        let after = query.get("after").flatMap { Int64($0) } ?? 0
        // `Double` reads "nan" and "inf" too, and a Duration of either traps: finite values only.
        let wait = min(max(query.get("wait").flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil } ?? 0, 0), 30)
        let expired = clock.timer(after: .seconds(wait))
        // A shutdown ends the wait at once: the phone asks again, from the same `after`.
        let stopping = NIOLockedValueBox(false)
        return try await withGracefulShutdownHandler {
            try await poll(device: device, after: after, until: { expired() || stopping.withLockedValue { $0 } })
        } onGracefulShutdown: {
            stopping.withLockedValue { $0 = true }
        }
    }

    private func poll(device: Device, after: Int64, until done: @Sendable () -> Bool) async throws -> Response {
        while true {
            let found = try await localPushes.localPushes(platform: device.platform, token: device.token, after: after, limit: 100)
            if !found.isEmpty || done() {
                let items = found.map { push in
                    LocalPushFeed.Item(
                        seq: push.seq,
                        platform: push.platform,
                        payload: (try? WireJSON.decode(JSONValue.self, from: push.payload)) ?? .null
                    )
                }
                return try JSONResponse.make(LocalPushFeed(pushes: items, next: found.last?.seq ?? after))
            }
            try await clock.sleep(for: .milliseconds(100))
        }
    }

    // MARK: Helpers

    /// A registration or update body. `declarative` is looked at before the body is decoded: a
    /// value other than true or false is a fault in the subscription's options, `400
    /// invalid_subscription` as the subscription's other faults are, not an undecodable body.
    static func readBody<Body: Decodable>(_ type: Body.Type, from request: inout Request) async throws -> Body {
        let data = Data(buffer: try await Edge.readRequiredBody(&request, limit: Edge.jsonBodyLimit))
        let parsed = try Edge.parseJSONObject(data)
        switch parsed["declarative"] {
        case nil, .null?, .bool?: break
        default: throw APIError(.invalidSubscription, "declarative must be true or false")
        }
        return try Edge.decode(Body.self, parsed: parsed, from: data)
    }

    /// Only a Web Push subscription has a declarative form.
    static func checkDeclarative(_ declarative: Bool?, platform: Platform) throws {
        guard declarative == true, platform != .webpush else { return }
        throw APIError(.invalidSubscription, "declarative is for platform webpush; \(platform.rawValue) has no declarative form")
    }

    /// Where a token reaches: a Web Push subscription's stored form without its choice of form.
    static func address(_ token: String) -> String {
        guard var subscription = WebPushSubscription(storageToken: token), subscription.declarative else { return token }
        subscription.declarative = false
        return subscription.storageToken
    }

    /// A device no provider can reach would get a webhook URL that never works: refused up
    /// front, as the webhook would refuse every call to it.
    func requireProvider(_ platform: Platform, app: String) throws {
        guard providers.provider(for: platform, app: app) == nil else { return }
        throw APIError.platformNotConfigured(platform, app: app)
    }

    /// An LSP node id as bLIP-55 names one: a compressed secp256k1 public key, 33 bytes in hex.
    static func parseNodeID(_ text: String) throws -> NodeID {
        guard text.utf8.count == 66, text.utf8.allSatisfy(\.isHex) else {
            throw APIError(.invalidLSPNodeID, "lsp_node_id must be 66 hex digits (a 33-byte compressed public key)")
        }
        guard text.hasPrefix("02") || text.hasPrefix("03") else {
            throw APIError(.invalidLSPNodeID, "lsp_node_id must be a compressed key: it starts with 02 or 03")
        }
        guard let nodeID = NodeID(hex: text) else {
            throw APIError(.invalidLSPNodeID, "lsp_node_id is not a point on the secp256k1 curve")
        }
        return nodeID
    }

    /// The device whose secret the bearer header carries; a wrong id and a wrong secret look
    /// the same from outside.
    func authenticate(_ request: Request, context: HeraldRequestContext) async throws -> Device {
        try await Self.authenticate(request, context: context, in: devices)
    }

    /// The device named by the path's `:id` whose secret the bearer header carries (the device
    /// routes and the presence routes).
    static func authenticate(_ request: Request, context: HeraldRequestContext, in devices: any DeviceStore) async throws -> Device {
        guard let id = context.parameters.get("id") else { throw APIError.notFound("no device id") }
        return try await authenticate(request, deviceID: id, in: devices)
    }

    /// The device whose secret the bearer header carries, for routes that name the device elsewhere.
    static func authenticate(_ request: Request, deviceID: String, in devices: any DeviceStore) async throws -> Device {
        guard let secret = Edge.bearerCredential(request.headers) else {
            throw APIError.unauthorized("send the device secret as 'Authorization: Bearer <device_secret>'")
        }
        guard let device = try await devices.device(id: deviceID, secret: secret) else {
            throw APIError.unauthorized("unknown device or wrong device secret")
        }
        return device
    }
}
