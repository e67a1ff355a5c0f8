import Foundation
import HeraldSQLite
import HeraldStore
import HeraldWire
import Testing

/// API keys (what `herald keys` does) and backend sessions, on every back end.
@Suite("Backend store: API keys and sessions")
struct BackendStoreTests {
    @Test("keys create, list and revoke; the secret is shown once", arguments: Backend.allCases)
    func keysLifecycle(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let created = try await store.createAPIKey(
                name: "ledger", scopes: [.sessions, .events], now: t0)
            #expect(created.secret.hasPrefix("hk_"))
            #expect(created.secret.count == 3 + 43)  // 32 bytes in unpadded base64url
            #expect(created.key.id.hasPrefix("key_"))

            let found = try #require(try await store.apiKey(secret: created.secret))
            #expect(found == created.key)
            #expect(found.allows(.events) && found.allows(.sessions) && !found.allows(.admin))
            #expect(try await store.apiKey(secret: created.secret + "x") == nil)
            #expect(try await store.apiKey(secret: "not-a-key") == nil)

            let second = try await store.createAPIKey(
                name: "ops", scopes: [.admin], now: t0.addingTimeInterval(1))
            #expect(second.secret != created.secret)
            #expect(try await store.apiKeys().map(\.name) == ["ledger", "ops"])
            #expect(second.key.allows("some_future_scope"))

            #expect(try await store.revokeAPIKey(id: created.key.id, now: t0.addingTimeInterval(5)))
            #expect(try await store.revokeAPIKey(id: created.key.id, now: t0.addingTimeInterval(9)))
            #expect(try await store.revokeAPIKey(id: "key_missing", now: t0) == false)
            let revoked = try #require(try await store.apiKey(secret: created.secret))
            #expect(revoked.revokedAt == t0.addingTimeInterval(5))
            #expect(try await store.apiKey(secret: second.secret)?.isRevoked == false)
        }
    }

    @Test(
        "another process opening the SQLite file sees a revocation; the secret is nowhere in the files")
    func keysAcrossProcessesSQLite() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-backend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("herald.sqlite").path
        let store = try SQLiteStore(path: path)
        let created = try await store.createAPIKey(name: "ledger", scopes: [.sessions], now: t0)
        #expect(try await store.revokeAPIKey(id: created.key.id, now: t0.addingTimeInterval(5)))

        // Another process (the running server) opening the same file sees the revocation.
        let reopened = try SQLiteStore(path: path)
        let revoked = try #require(try await reopened.apiKey(secret: created.secret))
        #expect(revoked.revokedAt == t0.addingTimeInterval(5))

        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
            #expect(bytes.range(of: Data(created.secret.utf8)) == nil, "the secret is in \(file)")
        }
    }

    @Test(
        "scope lists parse strictly",
        arguments: [
            ("sessions,events", "events,sessions"), (" Admin ", "admin"), ("events,,events", "events"),
        ]
    )
    func scopeLists(_ text: String, _ expected: String) throws {
        #expect(
            try APIScope.parseList(text).map(\.rawValue).sorted().joined(separator: ",") == expected)
    }

    @Test("unknown or empty scope lists are refused", arguments: ["", ",", "sessions,root"])
    func badScopeLists(_ text: String) {
        #expect(throws: UnknownAPIScope.self) { try APIScope.parseList(text) }
    }

    @Test(
        "push targets skip muted sessions, and drop and count dead tokens once",
        arguments: Backend.allCases)
    func targetsAndDeadTokens(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            for (session, platform, allow, token) in [
                ("a", Platform.ios, true, "aa"), ("b", .android, true, "bb"), ("c", .android, false, "cc"),
                ("d", .android, false, nil),
            ] {
                #expect(
                    try await store.putSession(
                        SessionWrite(
                            userID: "u", sessionID: session, platform: platform, allowNotifications: allow,
                            pushToken: token),
                        now: t0
                    )
                )
            }
            var targets = try await store.pushTargets(userID: "u", now: t0)
            #expect(targets.sessions.map(\.sessionID) == ["a", "b"])
            #expect(targets.droppedDead == 0)

            try await store.markDead(platform: .android, token: "bb", reason: "UNREGISTERED", now: t0)
            try await store.markDead(platform: .android, token: "cc", reason: "UNREGISTERED", now: t0)
            #expect(try await store.session(userID: "u", sessionID: "b")?.tokenStatus == .dead)

            targets = try await store.pushTargets(userID: "u", now: t0)
            #expect(targets.sessions.map(\.sessionID) == ["a"])
            #expect(targets.droppedDead == 2)
            #expect(try await store.pushTargets(userID: "u", now: t0).droppedDead == 0)

            let list = try await store.sessions(userID: "u")
            #expect(list.droppedDeadTokens == 2)
            #expect(list.sessions.map(\.tokenStatus) == [.active, .dead, .dead, .none])
            #expect(list.sessions[1].pushToken == nil)

            // A write without a token keeps `dead`; a new token makes it active again.
            _ = try await store.putSession(
                SessionWrite(
                    userID: "u", sessionID: "b", platform: .android, allowNotifications: false, pushToken: nil
                ), now: t0
            )
            #expect(try await store.session(userID: "u", sessionID: "b")?.tokenStatus == .dead)
            #expect(
                try await store.putSession(
                    SessionWrite(
                        userID: "u", sessionID: "b", platform: .android, allowNotifications: true,
                        pushToken: "b2"), now: t0
                ) == false
            )
            #expect(try await store.session(userID: "u", sessionID: "b")?.tokenStatus == .active)
            #expect(try await store.deleteSession(userID: "u", sessionID: "b"))
            #expect(try await store.deleteSession(userID: "u", sessionID: "b") == false)
        }
    }

    @Test("the welcome push is claimed once per user unless given back", arguments: Backend.allCases)
    func welcomeClaim(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.claimWelcome(userID: "u", now: t0))
            #expect(try await store.claimWelcome(userID: "u", now: t0) == false)
            try await store.releaseWelcome(userID: "u")
            #expect(try await store.claimWelcome(userID: "u", now: t0))
            #expect(try await store.claimWelcome(userID: "v", now: t0))
        }
    }
}
