import AsyncHTTPClient
import Foundation
import HTTPTypes
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

extension TestNDS {
    /// An API key with these scopes in this NDS's store; returns the secret.
    func apiKey(_ scopes: Set<APIScope> = [.sessions, .events], name: String = "test backend") async throws -> String {
        try await store.createAPIKey(name: name, scopes: scopes, now: Date()).secret
    }

    /// Runs `body` with the APNs and FCM look-alikes running and real providers pointing at them.
    func withMockPush(
        _ body: (MockPushServers, PushRouter) async throws -> Void
    ) async throws {
        let servers = try MockPushServers()
        try await servers.withRunning { running in
            let httpClient = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: running.caFile))
            do {
                let apns = try APNsProvider(
                    configuration: APNsConfiguration(
                        signingKeyPEM: servers.apnsKey.privateKeyPEM, keyID: servers.apnsKey.keyID,
                        teamID: servers.apnsKey.teamID, topic: servers.topic, environment: .custom(running.apnsBaseURL)
                    ),
                    httpClient: httpClient
                )
                let fcm = try FCMProvider(
                    configuration: FCMConfiguration(
                        serviceAccount: try ServiceAccount(json: running.serviceAccount.json), baseURL: running.fcmBaseURL
                    ),
                    httpClient: httpClient
                )
                try await body(servers, PushRouter(ios: apns, android: fcm))
            } catch {
                await httpClient.shutdown()
                throw error
            }
            await httpClient.shutdown()
        }
    }
}

/// The request a wallet backend makes: a method, a path, a bearer key and a JSON body.
struct BackendCall: Sendable, CustomTestStringConvertible {
    var method: HTTPRequest.Method
    var path: String
    var json: String?
    var scope: APIScope

    var testDescription: String { "\(method.rawValue) \(path)" }
}

extension TestClientProtocol {
    func call(
        _ method: HTTPRequest.Method, _ uri: String, key: String?, json: String? = nil, headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }
}

/// Seed 002's bodies, for the tests.
enum Seed002 {
    static func login(platform: String, token: String?, allow: Bool = true) -> String {
        let token = token.map { "\"\($0)\"" } ?? "null"
        return #"{"allow_notifications":\#(allow),"platform":"\#(platform)","push_token":\#(token)}"#
    }

    static let depositReceived = ##"""
        {"action":"DEPOSIT_RECEIVED",
         "data":{"transaction_id":"txn_8f2c","amount":"100.00","asset":"USDC","network":"base"},
         "notification":{"title":"Deposit received","body":"100.00 USDC is on its way","image":"https://cdn.example.com/deposit.png"},
         "color":"#4CAF50","icon":"ic_notification"}
        """##

    static let none = #"{"action":"NONE","notification":{"title":"Hello","body":"Nothing to do"}}"#
}
