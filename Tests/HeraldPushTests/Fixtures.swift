import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Logging

/// Quiet by default; set `LOG_LEVEL=debug` to see the providers' logs.
let testLogger: Logger = {
    var logger = Logger(label: "herald-push-tests")
    logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
    return logger
}()

/// A distinct 64-character hex device token.
func deviceToken(_ n: Int) -> String {
    String(format: "%064x", n + 0xABCDEF)
}

/// Runs `body` with the shared push client, shutting it down however `body` ends.
func withPushHTTPClient<T: Sendable>(
    trusting caFile: String?,
    connectTimeout: Duration = .seconds(10),
    connections: Int = 1,
    proxy: EgressProxy? = nil,
    allowPrivateWebPushEndpoints: Bool = true,
    _ body: (PushHTTPClient) async throws -> T
) async throws -> T {
    let client = try PushHTTPClient(
        configuration: .init(
            extraTrustRootsPEMFile: caFile, connectionsPerOrigin: connections, connectTimeout: connectTimeout, proxy: proxy,
            allowPrivateWebPushEndpoints: allowPrivateWebPushEndpoints))
    do {
        let value = try await body(client)
        await client.shutdown()
        return value
    } catch {
        await client.shutdown()
        throw error
    }
}

/// A mock APNs and an `APNsProvider` pointed at it, with a clock the test moves.
struct APNsFixture {
    static let topic = "com.example.wallet"

    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))
    let key = TestKeys.apnsP8()
    let certificate: TestCertificate
    let server: MockAPNsServer

    init(responseDelay: Duration? = nil) throws {
        certificate = try TestCertificate.make()
        server = MockAPNsServer(
            key: key,
            topic: Self.topic,
            certificate: certificate,
            now: clock.function,
            responseDelay: responseDelay
        )
    }

    /// Runs the mock and a provider for the duration of `body`. Without `trustCA` the client
    /// knows only the system roots, as a deployment missing `HERALD_TLS_CA_FILE` would.
    func run<T: Sendable>(
        trustCA: Bool = true,
        connectTimeout: Duration = .seconds(10),
        signingKey: APNsTestKey? = nil,
        connections: Int = 1,
        proxy: EgressProxy? = nil,
        _ body: (APNsProvider) async throws -> T
    ) async throws -> T {
        let signingKey = signingKey ?? key
        return try await server.withRunning { running in
            let caFile = trustCA ? try certificate.writeCAToTemporaryFile() : nil
            defer { caFile.map { try? FileManager.default.removeItem(atPath: $0) } }
            return try await withPushHTTPClient(trusting: caFile, connectTimeout: connectTimeout, connections: connections, proxy: proxy) { client in
                let configuration = APNsConfiguration(
                    signingKeyPEM: signingKey.privateKeyPEM,
                    keyID: signingKey.keyID,
                    teamID: signingKey.teamID,
                    topic: Self.topic,
                    environment: .custom(running.baseURL)
                )
                return try await body(try APNsProvider(configuration: configuration, httpClient: client, now: clock.function))
            }
        }
    }
}

/// A mock Google (OAuth + FCM) over TLS and an `FCMProvider` pointed at it.
struct FCMFixture {
    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))
    let certificate: TestCertificate
    let server: MockFCMServer

    init(responseDelay: Duration? = nil) throws {
        certificate = try TestCertificate.make()
        server = MockFCMServer(certificate: certificate, now: clock.function, responseDelay: responseDelay)
    }

    /// - Parameters:
    ///   - trusted: Whether the mock knows the service account's key.
    ///   - http1TokenEndpoint: Serve the token endpoint from a listener of its own that speaks
    ///     HTTP/1.1 only.
    func run<T: Sendable>(
        trusted: Bool = true,
        http1TokenEndpoint: Bool = false,
        proxy: EgressProxy? = nil,
        _ body: (FCMProvider, TestServiceAccount) async throws -> T
    ) async throws -> T {
        try await server.withRunning { running in
            let tokenServer = http1TokenEndpoint ? try await server.startHTTP1TokenEndpoint() : nil
            defer { if let tokenServer { Task { await tokenServer.stop() } } }
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            let account =
                trusted
                ? try await server.makeServiceAccount()
                : try TestKeys.serviceAccount(tokenURI: "\(running.baseURL)/token")
            return try await withPushHTTPClient(trusting: caFile, proxy: proxy) { client in
                let configuration = FCMConfiguration(
                    // Through the JSON decoder, as a deployment reads the key file.
                    serviceAccount: try ServiceAccount(json: account.json),
                    baseURL: running.baseURL
                )
                return try await body(
                    try FCMProvider(configuration: configuration, httpClient: client, now: clock.function),
                    account
                )
            }
        }
    }
}

/// The Breez `swap.update` push (seed 000).
let swapUpdateData = PushData(
    notificationType: .swapUpdated,
    notificationPayload: #"{"id":"0a1b2c","status":"transaction.mempool"}"#,
    appData: "wallet-7"
)

extension String {
    var utf8Data: Data { Data(utf8) }
}
