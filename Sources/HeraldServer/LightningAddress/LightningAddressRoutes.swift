import Foundation
import HTTPTypes
import HeraldStore
import HeraldWire
import Hummingbird

/// `POST /api/v1/lnurlpay` claims or renames a device's Lightning address (`alice@host`),
/// `DELETE /api/v1/lnurlpay` releases it; both with the device secret as bearer.
struct LightningAddressRoutes: Sendable {
    let devices: any DeviceStore
    let addresses: any LightningAddressStore
    let cache: any ReplyStore
    let settings: ServerSettings
    /// `registration: challenge`: only a confirmed device takes an address.
    let challenges: any DeviceChallengeStore
    let now: @Sendable () -> Date
    /// BIP-353 names beside the addresses, when a DNS server takes them (`bip353.server`).
    var bip353: Bip353Names? = nil

    struct ClaimBody: Decodable {
        var deviceID: String
        var username: String
        /// A BOLT 12 offer (`lno1…`) to publish under the name by BIP-353.
        var offer: String?
        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id"
            case username, offer
        }
    }

    struct ReleaseBody: Decodable {
        var deviceID: String
        enum CodingKeys: String, CodingKey { case deviceID = "device_id" }
    }

    struct Claimed: Encodable {
        var username: String
        var lightningAddress: String
        var lnurlpURL: String
        var previous: String?
        /// `₿alice@domain`, when the device's name carries an offer.
        var bip353: String?
        /// `published`, `pending` or `failed: <RCODE>`.
        var bip353State: String?
        enum CodingKeys: String, CodingKey {
            case username
            case lightningAddress = "lightning_address"
            case lnurlpURL = "lnurlp_url"
            case previous, bip353
            case bip353State = "bip353_state"
        }
    }

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("lnurlpay") { request, context in try await claim(request, context: context) }
        router.get("lnurlpay") { request, context in try await show(request, context: context) }
        router.delete("lnurlpay") { request, context in try await release(request, context: context) }
    }

    func claim(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let body = try await Edge.readJSONBody(ClaimBody.self, from: &request)
        let device = try await DeviceRoutes.authenticate(request, deviceID: body.deviceID, in: devices)
        try await Edge.requireConfirmed(device, settings: settings, challenges: challenges)
        guard let username = LightningAddressName.valid(body.username) else {
            throw APIError(
                .invalidUsername, "a username is 1 to \(LightningAddressName.maxLength) of a-z, 0-9, '-', '_' and '.' (LUD-16)"
            )
        }
        // Checked before anything changes: a bad offer leaves the name and its record as they were.
        let uri = try body.offer.map { text in
            guard bip353 != nil else {
                throw APIError(.bip353NotConfigured, "this server publishes no BIP-353 names (bip353.server is not set)")
            }
            return try Bip353Names.uri(offer: text)
        }
        let previous: String?
        let status: HTTPResponse.Status
        switch try await addresses.claimUsername(username, deviceID: device.id, now: now()) {
        case .taken:
            throw APIError(.usernameTaken, "another wallet owns '\(username)'")
        case .unchanged:
            (previous, status) = (nil, .ok)
        case .claimed(let renamed):
            if renamed != nil { try await cache.removeCachedReplies(prefix: LnurlPayRoutes.cachePrefix(deviceID: device.id)) }
            (previous, status) = (renamed, renamed == nil ? .created : .ok)
        }
        let record = try await bip353?.claimed(username: username, previous: previous, deviceID: device.id, uri: uri)
        return try await claimed(username, previous: previous, record: record, status: status)
    }

    func claimed(_ username: String, previous: String?, record: Bip353Record?, status: HTTPResponse.Status) async throws -> Response {
        let host = LightningAddressName.host(of: settings.publicURL)
        var answer = Claimed(
            username: username,
            lightningAddress: "\(username)@\(host)",
            lnurlpURL: LnurlPayRoutes.wellKnownURL(settings: settings, username: username),
            previous: previous
        )
        if let bip353, let record, record.uri != nil {
            answer.bip353 = bip353.settings.address(record.name)
            answer.bip353State = try await bip353.state(of: record)
        }
        return try JSONResponse.make(answer, status: status)
    }

    /// `GET /api/v1/lnurlpay?device_id=…`: the device's address, and its BIP-353 record's state.
    func show(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let deviceID = request.uri.queryParameters.get("device_id") ?? ""
        let device = try await DeviceRoutes.authenticate(request, deviceID: deviceID, in: devices)
        guard let address = try await addresses.lightningAddress(deviceID: device.id) else {
            throw APIError(.noUsername, "this device has no Lightning address")
        }
        let record = try await bip353.asyncMap { try await $0.store.bip353Record(deviceID: device.id) } ?? nil
        return try await claimed(address.username, previous: nil, record: record, status: .ok)
    }

    func release(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var request = request
        let deviceID: String
        if let id = request.uri.queryParameters.get("device_id") {
            deviceID = id
        } else {
            deviceID = try await Edge.readJSONBody(ReleaseBody.self, from: &request).deviceID
        }
        let device = try await DeviceRoutes.authenticate(request, deviceID: deviceID, in: devices)
        guard try await addresses.releaseUsername(deviceID: device.id) != nil else {
            throw APIError(.noUsername, "this device has no Lightning address")
        }
        try await bip353?.released(deviceID: device.id)
        try await cache.removeCachedReplies(prefix: LnurlPayRoutes.cachePrefix(deviceID: device.id))
        return Response(status: .noContent)
    }
}

/// LUD-16 usernames and the host part of the addresses.
enum LightningAddressName {
    static let maxLength = 64

    /// The username if it follows LUD-16 (`a-z0-9-_.`), else `nil`.
    static func valid(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= maxLength,
            text.utf8.allSatisfy({ byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            })
        else { return nil }
        return text
    }

    /// `host[:port]` of the public URL: what follows the `@`.
    static func host(of publicURL: String) -> String {
        guard let components = URLComponents(string: publicURL), let host = components.host else { return publicURL }
        if let port = components.port { return "\(host):\(port)" }
        return host
    }
}
