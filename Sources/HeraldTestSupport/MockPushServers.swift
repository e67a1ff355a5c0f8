import Foundation
import Logging

/// The APNs, Google OAuth and FCM look-alikes together, sharing one test CA, for tests and
/// the bench: start them, point Herald at ``RunningMockPushServers/apnsBaseURL`` and
/// ``RunningMockPushServers/fcmBaseURL`` with ``RunningMockPushServers/caFile`` trusted, stop them.
public struct MockPushServers: Sendable {
    public let certificate: TestCertificate
    public let apnsKey: APNsTestKey
    public let topic: String
    public let apns: MockAPNsServer
    public let fcm: MockFCMServer

    /// Makes fresh key material and a CA; both mocks serve HTTP/2 over TLS.
    public init(
        topic: String = "com.example.wallet",
        projectID: String = "herald-test",
        now: @escaping @Sendable () -> Date = { Date() },
        responseDelay: Duration? = nil
    ) throws {
        certificate = try TestCertificate.make()
        apnsKey = TestKeys.apnsP8()
        self.topic = topic
        apns = MockAPNsServer(key: apnsKey, topic: topic, certificate: certificate, now: now, responseDelay: responseDelay)
        fcm = MockFCMServer(projectID: projectID, certificate: certificate, now: now, responseDelay: responseDelay)
    }

    /// Starts both servers, writes the CA to a temporary file and makes a trusted service account.
    public func start(
        logger: Logger = Logger(label: "mock-push", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockPushServers {
        let apnsServer = try await apns.start(logger: logger)
        let fcmServer: RunningMockServer
        do {
            fcmServer = try await fcm.start(logger: logger)
        } catch {
            await apnsServer.stop()
            throw error
        }
        do {
            return RunningMockPushServers(
                apnsServer: apnsServer,
                fcmServer: fcmServer,
                serviceAccount: try await fcm.makeServiceAccount(),
                caFile: try certificate.writeCAToTemporaryFile()
            )
        } catch {
            await apnsServer.stop()
            await fcmServer.stop()
            throw error
        }
    }

    /// Runs both servers for the duration of `body`.
    public func withRunning<T: Sendable>(_ body: (RunningMockPushServers) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }
}

/// Running mock push servers.
public struct RunningMockPushServers: Sendable {
    public let apnsServer: RunningMockServer
    public let fcmServer: RunningMockServer
    /// A service account the mock token endpoint trusts, `token_uri` pointing at it.
    public let serviceAccount: TestServiceAccount
    /// The test CA as a PEM file, for `HERALD_TLS_CA_FILE`-style trust.
    public let caFile: String

    /// For an APNs `.custom` environment.
    public var apnsBaseURL: String { apnsServer.baseURL }
    /// For FCM's base URL.
    public var fcmBaseURL: String { fcmServer.baseURL }

    /// Stops both servers and removes the CA file.
    public func stop() async {
        await apnsServer.stop()
        await fcmServer.stop()
        try? FileManager.default.removeItem(atPath: caFile)
    }
}
