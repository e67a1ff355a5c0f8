import Foundation
import HeraldPush
import HeraldSQLite
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Logging
import Testing

/// Two processes' APNs providers on one database, under a test clock: the key's token is signed
/// once, refreshed once after 40 minutes, and replaced once when APNs rejects it, however many
/// senders use it.
@Suite("Provider tokens shared between processes")
struct SharedProviderTokenTests {
    @Test("one signature per refresh for two processes; a rejected token is replaced once")
    func refreshOnce() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let key = TestKeys.apnsP8()
        let certificate = try TestCertificate.make()
        let mock = MockAPNsServer(key: key, topic: "com.example.wallet", certificate: certificate, now: clock.function)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-share-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await SQLiteStore.open(path: folder.appendingPathComponent("herald.sqlite").path)
        let caFile = folder.appendingPathComponent("ca.pem").path
        try certificate.writeCA(to: caFile)
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

        try await mock.withRunning { running in
            let client = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile), logger: logger)
            let configuration = APNsConfiguration(
                signingKeyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID, topic: "com.example.wallet",
                environment: .custom(running.baseURL))
            // Two processes: each its own provider and holder id, one database.
            let processes = try (0..<2).map { index in
                try APNsProvider(
                    configuration: configuration, httpClient: client,
                    sharing: TokenSharing(store: store, holder: "process-\(index)", logger: logger),
                    now: clock.function)
            }
            let message = PushMessage(kind: .alert, data: ["k": "v"], alert: .init(title: "t", body: "b"))
            func sendFromBoth(_ count: Int) async -> [PushOutcome] {
                await withTaskGroup(of: PushOutcome.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            await processes[index % 2].send(
                                message, to: PushTarget(platform: .ios, token: String(repeating: "ab", count: 32)), logger: logger)
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(await sendFromBoth(20).allSatisfy { $0.kind == .delivered })
            #expect(await mock.providerTokens()[key.keyID]?.count == 1)

            clock.advance(by: .seconds(41 * 60))
            #expect(await sendFromBoth(20).allSatisfy { $0.kind == .delivered })
            #expect(await mock.providerTokens()[key.keyID]?.count == 2)

            // APNs rejects the current token (as after a key was revoked and restored): both
            // processes see the 403; the token is replaced once and the retries go through.
            let device = String(repeating: "cd", count: 32)
            await mock.script.enqueue([.expiredProviderToken, .expiredProviderToken], for: device)
            let rejected = await withTaskGroup(of: PushOutcome.self) { group in
                for process in processes {
                    group.addTask { await process.send(message, to: PushTarget(platform: .ios, token: device), logger: logger) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(rejected.allSatisfy { $0.kind != .delivered })
            #expect(await sendFromBoth(10).allSatisfy { $0.kind == .delivered })
            let tokens = await mock.providerTokens()
            #expect(tokens[key.keyID]?.count == 3, "\(tokens)")
            await client.shutdown()
        }
    }
}
