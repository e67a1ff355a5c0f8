import Foundation
import HeraldPush
import HeraldStore
import HeraldWire

/// The one way from what a route is given (a webhook token, a registered device, an identity) to
/// the push targets it may reach. What may be pushed is decided here, for every route alike: a
/// deleted device or a dead token is never a target, and under `registration: challenge` neither
/// is a device that has not confirmed its token yet (registered, or moved to a new token, and its
/// code not back), except for the challenge push itself. Routes build no `PushTarget` of a
/// device themselves: a rule written once here cannot be forgotten in the next route.
struct DeviceDirectory: Sendable {
    let devices: any DeviceStore
    let identities: any IdentityStore
    let challenges: any DeviceChallengeStore
    let providers: PushRouter
    let settings: ServerSettings

    /// Why a device is not pushed.
    enum Skip: String, Sendable {
        case unconfirmed, dead
        case notConfigured = "not_configured"
    }

    /// What a webhook's `token` parameter reaches: a registered alias, or (when the operator
    /// allows raw tokens) a push token as Breez-style integrations send; with the device for a
    /// registered alias. Throws the answer a caller gets for a token that reaches nothing.
    func webhookRecipient(token given: String, platform: Platform?, app: String?) async throws -> (PushDelivery.Recipient, Device?) {
        // One spelling before the lookup: the dead mark, the allowance and the idempotency key
        // all see the token as registration stores it.
        let token = platform.map { PushTokenForm.normalized(given, platform: $0) } ?? given
        let resolution = try await devices.resolveWebhookToken(token, rawPlatform: platform)
        if let device = resolution.device {
            return (try await recipient(device, isDead: resolution.isDead), device)
        }
        if resolution.isDeletedAlias { throw APIError.deviceDeleted }
        guard settings.acceptRawTokens, !DeviceAlias.hasAliasForm(token) else {
            throw APIError(.unknownToken, "no device is registered under this token")
        }
        guard let platform else { throw APIError(.missingPlatform, "the query parameter 'platform' is required") }
        // A subscription carries its keys and a URL Herald would be told to POST to: only
        // registration, which checks both, may name one.
        guard platform != .webpush else {
            throw APIError(.aliasRequired, "a Web Push device is reached only through its registered alias (POST /api/v1/devices)")
        }
        try Edge.checkPushToken(token, platform: platform, field: "token")
        // A raw token names its app in the query; a registered device's is its own.
        let target = PushTarget(platform: platform, token: token, app: try Edge.checkApp(app, providers: providers))
        if resolution.isDead { throw APIError.tokenUnregistered }
        var recipient = PushDelivery.Recipient(target: target)
        recipient.registered = false
        return (recipient, nil)
    }

    /// A registered device as a recipient: throws `410 token_unregistered` for a dead token and
    /// `403 device_unconfirmed` for a device that has not confirmed its token.
    func recipient(_ device: Device, isDead: Bool) async throws -> PushDelivery.Recipient {
        if let skip = try await skip(device, isDead: isDead) {
            switch skip {
            case .dead: throw APIError.tokenUnregistered
            case .unconfirmed:
                throw APIError(
                    .deviceUnconfirmed,
                    "the device has not yet proven it receives pushes at its token (registration: challenge); its app confirms by itself once the challenge push arrives"
                )
            case .notConfigured: throw APIError.platformNotConfigured(device.platform, app: device.app)
            }
        }
        return Self.recipient(device)
    }

    /// The device a registered alias names, if it may be pushed; throws as ``recipient(_:isDead:)``,
    /// and `unknown_token` or `device_deleted` for an alias that names none.
    func device(alias: String) async throws -> (Device, PushDelivery.Recipient) {
        let resolution = try await devices.resolveWebhookToken(alias, rawPlatform: nil)
        guard let device = resolution.device else {
            if resolution.isDeletedAlias { throw APIError.deviceDeleted }
            throw APIError(.unknownToken, "no device is registered under this token")
        }
        return (device, try await recipient(device, isDead: resolution.isDead))
    }

    /// A device's webhook URL on this server, as its registration answers it: what its app hands
    /// to swap and LNURL services, and names in an NWC registration to have the device woken.
    func webhookURL(_ device: Device) -> String {
        "\(settings.publicURL)/api/v1/notify?platform=\(device.platform.rawValue)&token=\(device.alias)"
    }

    /// Whether `url` is one of this server's device webhook URLs (``webhookURL(_:)``), whichever
    /// device it names, if any: such a URL is pushed to, never POSTed to.
    func isDeviceWebhook(_ url: String) -> Bool {
        alias(inWebhookURL: url) != nil
    }

    /// The device one of this server's webhook URLs (``webhookURL(_:)``) names, as
    /// ``device(alias:)`` finds it and with its errors; nil for any other URL (another service's
    /// webhook, which the caller POSTs to instead).
    func device(webhookURL url: String) async throws -> (device: Device, recipient: PushDelivery.Recipient)? {
        guard let alias = alias(inWebhookURL: url) else { return nil }
        return try await device(alias: alias)
    }

    /// The alias ``webhookURL(_:)`` wrote into `url`; nil for a URL it did not write.
    private func alias(inWebhookURL url: String) -> String? {
        guard url.hasPrefix(settings.publicURL + "/api/v1/notify?"), let components = URLComponents(string: url),
            let token = components.queryItems?.first(where: { $0.name == "token" })?.value, DeviceAlias.hasAliasForm(token)
        else { return nil }
        return token
    }

    /// Every device that proved `identity` and may be pushed now, with those left out and why.
    func devices(identity: String) async throws -> (reachable: [Device], skipped: [Skip]) {
        var reachable: [Device] = []
        var skipped: [Skip] = []
        for found in try await identities.devices(identity: identity) {
            guard let device = found.device else { continue }
            if let skip = try await skip(device, isDead: found.isDead) {
                skipped.append(skip)
            } else {
                reachable.append(device)
            }
        }
        return (reachable, skipped)
    }

    /// Refuses proving `identities` on one more device once an identity is on
    /// `identity_devices_max` devices already (`409 too_many_devices`): a push to the identity
    /// goes to each of them. The device being updated (`deviceID`) and devices on the same token
    /// (the phone registering again) do not count.
    func admitIdentities(_ identities: [String], deviceID: String? = nil, token: String) async throws {
        for identity in identities {
            let others = try await self.identities.devices(identity: identity).compactMap(\.device).filter {
                $0.id != deviceID && $0.token != token
            }
            if others.count >= settings.identity.devicesMax {
                throw APIError(
                    .tooManyDevices,
                    "\(identity.prefix(24))… is proven on \(others.count) devices already (identity_devices_max); delete one, or register this phone without it"
                )
            }
        }
    }

    /// Why `device` may not be pushed now; nil when it may.
    func skip(_ device: Device, isDead: Bool) async throws -> Skip? {
        if isDead { return .dead }
        if providers.provider(for: device.platform, app: device.app) == nil { return .notConfigured }
        if settings.registration == .challenge, try await challenges.isUnconfirmed(deviceID: device.id) { return .unconfirmed }
        return nil
    }

    /// The challenge push's recipient: the one push a device gets before it confirms.
    func challengeRecipient(_ device: Device) -> PushDelivery.Recipient {
        Self.recipient(device)
    }

    /// A device the directory returned (``devices(identity:)``) as a recipient.
    static func recipient(_ device: Device) -> PushDelivery.Recipient {
        PushDelivery.Recipient(target: PushTarget(platform: device.platform, token: device.token, app: device.app), sealKey: device.sealKey)
    }
}
