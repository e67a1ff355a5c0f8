import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldSQLite
import HeraldServer
import HeraldStore
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// An NDS under test: a real SQLite file in a temporary folder and real providers.
struct TestNDS {
    let folder: URL
    let store: SQLiteStore
    var settings: ServerSettings
    var intake = IntakeConfiguration()
    var dispatcher: DispatcherConfiguration
    var presence = PresenceRegistry.Configuration()
    let logger: Logger

    init(acceptRawTokens: Bool = true, jobTTL: Duration = .seconds(3600), folder: URL? = nil) throws {
        let folder =
            folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("herald-nds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        store = try SQLiteStore(path: folder.appendingPathComponent("herald.sqlite").path)
        settings = ServerSettings(
            publicURL: "http://nds.test",
            acceptRawTokens: acceptRawTokens,
            jobTTL: jobTTL,
            registrationsPerMinute: 5,
            localProvider: true
        )
        dispatcher = DispatcherConfiguration()
        dispatcher.backoff = Backoff(base: .milliseconds(50), cap: .milliseconds(200))
        var logger = Logger(label: "herald-test")
        logger.logLevel = .warning
        self.logger = logger
    }

    /// The local development provider as `herald serve` has it: each push is stored in this
    /// NDS's store with its outcome.
    func localRouter() -> PushRouter {
        let local = LocalDevelopmentProvider()
        return PushRouter(ios: local, android: local)
    }

    func app(
        providers: PushRouter? = nil, metrics: HeraldMetrics = HeraldMetrics(),
        now: @escaping @Sendable () -> Date = { Date() }, clock: any Clock<Duration> = ContinuousClock()
    ) -> some ApplicationProtocol {
        buildApplication(
            configuration: HeraldServerConfiguration(
                host: "127.0.0.1", port: 0, settings: settings, intake: intake, dispatcher: dispatcher, presence: presence
            ),
            store: store,
            providers: providers ?? localRouter(),
            metrics: metrics,
            now: now,
            clock: clock,
            logger: logger
        )
    }
}

extension TestClientProtocol {
    func post(_ uri: String, json: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: json))
    }
}

extension TestResponse {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }
    var text: String { String(buffer: body) }
}
