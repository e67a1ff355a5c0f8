import Foundation
import HeraldPostgres
import HeraldSQLite
import HeraldStore
import HeraldTestSupport
import Logging
import Testing

/// `herald dead-letters` on the database directly: a SQLite file and a `postgres://` URL.
@Suite("herald dead-letters")
struct DeadLetterCommandTests {
    enum Database: String, CaseIterable, Sendable { case sqlite, postgres }

    /// Runs `body` with a store on a fresh database and the `--database` value naming it.
    static func withDatabase(_ kind: Database, _ body: (any HeraldStoreBackend, String) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-dlq-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("herald.sqlite").path
            try await body(try await SQLiteStore.open(path: path), path)
        case .postgres:
            let database = try await ThrowawayPostgres.shared.makeDatabase()
            let store = PostgresStore(
                location: try PostgresLocation(url: database.url), maximumConnections: 2,
                logger: Logger(label: "herald.dlq", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            try await store.migrate()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.client.run() }
                defer { group.cancelAll() }
                try await body(store, database.url)
            }
        }
    }

    static func deadLetter(_ store: any HeraldStoreBackend, token: String, reason: String) async throws -> String {
        let now = Date()
        let new = NewJob(
            destination: .device(.ios), token: token, notificationType: "swap_updated", payload: Data("{}".utf8), idempotencyKey: nil,
            expiresAt: now.addingTimeInterval(600), app: Device.defaultApp
        )
        _ = try await store.enqueue([new], now: now, leaseUntil: now.addingTimeInterval(60))
        try await store.complete(
            [JobCompletion(job: OutboxJob(new, createdAt: now), resolution: .deadLetter(reason: reason, answer: "503 ServiceUnavailable"))],
            now: now
        )
        return new.id
    }

    static func herald(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ProgramRun.output(try ServerProcess.binary(), ["dead-letters"] + arguments)
    }

    @Test("herald keys and dead-letters read the database from the configuration file alone", arguments: Database.allCases)
    func configurationFileNamesTheDatabase(_ kind: Database) async throws {
        try await Self.withDatabase(kind) { store, database in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).yaml")
            try "database: \"\(database)\"\n".write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            // Nothing but HERALD_CONFIG names the database.
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
            environment["HERALD_CONFIG"] = file.path
            let created = try await ProgramRun.output(
                try ServerProcess.binary(), ["keys", "create", "--name", "from-file", "--scopes", "admin"], environment: environment)
            #expect(created.status == 0)
            #expect(try await store.apiKeys().map(\.name) == ["from-file"])
            let secret = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await store.apiKey(secret: secret)?.name == "from-file")

            // --config says the same as HERALD_CONFIG, for dead-letters too.
            let letter = try await Self.deadLetter(store, token: "config-token-0001", reason: "ttl_expired")
            environment["HERALD_CONFIG"] = nil
            let listed = try await ProgramRun.output(
                try ServerProcess.binary(), ["dead-letters", "list", "--config", file.path], environment: environment)
            #expect(listed.status == 0 && listed.output.contains(letter))
        }
    }

    @Test("lists (tokens redacted), replays once, refuses a dead token, purges by filter", arguments: Database.allCases)
    func listReplayPurge(_ kind: Database) async throws {
        try await Self.withDatabase(kind) { store, database in
            let token = String(repeating: "7c", count: 32)
            let expired = try await Self.deadLetter(store, token: token, reason: "ttl_expired: 503 ServiceUnavailable")
            let gone = try await Self.deadLetter(store, token: "676f6e652d746f6b656e2d30303031", reason: "ttl_expired")
            let permanent = try await Self.deadLetter(store, token: "bad-token-0002", reason: "permanent: 400 BadTopic")
            try await store.markDead(platform: .ios, token: "676f6e652d746f6b656e2d30303031", reason: "Unregistered", now: Date())

            let listed = try await Self.herald(["list", "--reason", "ttl_expired", "--database", database])
            #expect(listed.status == 0)
            #expect(listed.output.contains(expired) && listed.output.contains(gone) && !listed.output.contains(permanent))
            #expect(listed.output.contains("answer: 503 ServiceUnavailable"))
            #expect(!listed.output.contains(token))  // redacted
            #expect(listed.output.contains("7c7c7c…"))

            let replayed = try await Self.herald(["replay", expired, "--database", database])
            #expect(replayed.status == 0 && replayed.output.hasPrefix("replayed \(expired) as "))
            let again = try await Self.herald(["replay", expired, "--database", database])
            #expect(again.status == 0 && again.output.contains("replayed before"))
            #expect(try await Self.herald(["replay", gone, "--database", database]).status == 1)
            #expect(try await Self.herald(["replay", "--database", database]).status != 0)  // neither id nor --all
            #expect(try await store.counts().pending == 1)

            let purged = try await Self.herald(["purge", "--all", "--reason", "permanent", "--database", database])
            #expect(purged.status == 0 && purged.output.contains("purged 1"))
            let left = try await store.deadLetters(matching: DeadLetterFilter(), limit: 10, after: nil).letters.map(\.id)
            #expect(left == [gone])
        }
    }
}
