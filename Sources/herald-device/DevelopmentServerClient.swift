import Foundation
import HeraldWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The NDS endpoints a development phone uses: registration, and the local provider's push feed.
struct DevelopmentServerClient {
    let server: URL
    let session: URLSession
    /// An API key of scope `devices`, for a server in `registration: key`.
    let apiKey: String?

    init(server: URL, apiKey: String? = nil) {
        self.server = server
        self.apiKey = apiKey
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        self.session = URLSession(configuration: configuration)
    }

    /// `POST /api/v1/devices`.
    func register(platform: Platform, pushToken: String?, subscription: WebPushSubscription? = nil) async throws -> DeviceRegistration {
        var request = URLRequest(url: server.appendingPathComponent("api/v1/devices"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try WireJSON.encode(
            DeviceRegistrationRequest(platform: platform.rawValue, pushToken: pushToken, subscription: subscription))
        let answer = try await decode(DeviceRegistrationAnswer.self, request, expecting: 201)
        guard let secret = answer.deviceSecret else { throw ServerError(status: 201, body: "the answer has no device_secret") }
        return DeviceRegistration(deviceID: answer.deviceID, deviceSecret: secret, webhookURL: answer.webhookURL, alias: answer.alias)
    }

    /// `PUT /api/v1/devices/{id}` with only what changes (an LSP node id, say).
    func update(_ registration: DeviceRegistration, _ body: DeviceTokenUpdate) async throws -> DeviceRegistrationAnswer {
        var request = URLRequest(url: server.appendingPathComponent("api/v1/devices/\(registration.deviceID)"))
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(registration.deviceSecret)", forHTTPHeaderField: "Authorization")
        request.httpBody = try WireJSON.encode(body)
        return try await decode(DeviceRegistrationAnswer.self, request, expecting: 200)
    }

    /// `GET /api/v1/devices/{id}/pushes?after=…&wait=…`: the pushes newer than `after`, waiting up to `wait`.
    func pushes(for registration: DeviceRegistration, after sequence: Int64, wait: Int) async throws -> LocalPushFeed {
        var components = URLComponents(
            url: server.appendingPathComponent("api/v1/devices/\(registration.deviceID)/pushes"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "after", value: String(sequence)), URLQueryItem(name: "wait", value: String(wait))]
        guard let url = components?.url else { throw ServerError(status: 0, body: "bad server URL") }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(registration.deviceSecret)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = TimeInterval(wait + 15)
        return try await decode(LocalPushFeed.self, request, expecting: 200)
    }

    func decode<T: Decodable>(_ type: T.Type, _ request: URLRequest, expecting status: Int) async throws -> T {
        let (data, response) = try await session.data(for: request)
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard code == status || (status == 201 && code == 200) else {
            throw ServerError(status: code, body: String(decoding: data.prefix(500), as: UTF8.self))
        }
        return try WireJSON.decode(type, from: data)
    }
}

/// A registration kept in the wallet folder, to reuse on the next start with the same server.
struct DeviceRegistration: Codable {
    var deviceID: String
    var deviceSecret: String
    var webhookURL: String
    var alias: String?
    /// Which server it belongs to (not part of the server's answer).
    var server: String?
    /// The platform and push token it registered (kept beside the answer, to show and reuse).
    var platform: String?
    var pushToken: String?

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case deviceSecret = "device_secret"
        case webhookURL = "webhook_url"
        case alias, server, platform
        case pushToken = "push_token"
    }
}

struct ServerError: Error, CustomStringConvertible {
    var status: Int
    var body: String
    var description: String { "HTTP \(status): \(body)" }
}
