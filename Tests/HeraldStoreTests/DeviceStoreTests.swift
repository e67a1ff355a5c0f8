import Foundation
import HeraldStore
import HeraldWire
import Testing

/// Devices and their aliases, on every back end.
@Suite("Store: devices")
struct DeviceStoreTests {
    @Test("a deleted device's alias resolves as deleted, never as a raw token; an unknown alias as neither", arguments: Backend.allCases)
    func deletedAlias(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let registration = try await store.registerDevice(platform: .ios, token: String(repeating: "cd", count: 32), now: t0)
            let alias = registration.device.alias
            #expect(DeviceAlias.hasAliasForm(alias))
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: .ios).device?.id == registration.device.id)

            try await store.deleteDevice(id: registration.device.id, now: t0)
            let gone = try await store.resolveWebhookToken(alias, rawPlatform: .ios)
            #expect(gone.device == nil && gone.isDeletedAlias && !gone.isDead)
            let never = try await store.resolveWebhookToken("a." + String(repeating: "Z", count: 24), rawPlatform: .ios)
            #expect(never.device == nil && !never.isDeletedAlias)
            // A raw token is still a raw token, whatever it looks like (aliases issued before the
            // `a.` prefix were 24 characters of base64url: one of those stays raw unless deleted).
            let legacyLooking = try await store.resolveWebhookToken("hostile-final-1234567890", rawPlatform: .android)
            #expect(legacyLooking.device == nil && !legacyLooking.isDeletedAlias)
            let raw = try await store.resolveWebhookToken(String(repeating: "ef", count: 32), rawPlatform: .ios)
            #expect(raw.device == nil && !raw.isDeletedAlias)
        }
    }

    @Test("raw tokens resolved at once, a third of them dead, each get their own answer", arguments: Backend.allCases)
    func concurrentDeadChecks(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let tokens = (0..<150).map { String(format: "%064x", 0xdead_0000 + $0) }
            for token in tokens.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
                try await store.markDead(platform: .ios, token: token, reason: "Unregistered", now: t0)
            }
            let answers = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for token in tokens {
                    group.addTask { (token, try await store.resolveWebhookToken(token, rawPlatform: .ios).isDead) }
                }
                return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == tokens.count)
            for (index, token) in tokens.enumerated() {
                #expect(answers[token] == (index % 3 == 0), "token \(index)")
            }
        }
    }

    @Test("a deleted alias is stamped with the caller's time, not the database's or the machine's", arguments: Backend.allCases)
    func deletedAt(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, database in
            let registration = try await store.registerDevice(platform: .android, token: "fcm-deleted-at", now: t0)
            try await store.deleteDevice(id: registration.device.id, now: t0.addingTimeInterval(42))
            #expect(try await database.count("device") == 0)
            #expect(
                try await database.number("SELECT deleted_at FROM deleted_alias WHERE alias = '\(registration.device.alias)'")
                    == t0.timeIntervalSince1970 + 42)
        }
    }

    // MARK: One use case, one transaction

    let alice = "ln:02" + String(repeating: "a1", count: 32)
    let nodeA = "02" + String(repeating: "a1", count: 32)
    let nodeB = "03" + String(repeating: "b2", count: 32)
    let keyB = try! SealPublicKey(base64: Data(repeating: 0x0b, count: 32).base64EncodedString())

    @Test("a registration whose identity write fails leaves no device, LSP or challenge behind", arguments: Backend.allCases)
    func registrationIsOneTransaction(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, database in
            try await database.refuseInserts(into: "device_identity", backend: backend)
            let extras = DeviceExtras(lspNodeID: nodeA, identities: [alice], challengeHash: Secrets.hash("code"))
            await #expect(throws: (any Error).self) {
                try await store.registerDevice(
                    platform: .android, token: "fcm-refused", sealKey: nil, app: Device.defaultApp, extras: extras, now: t0)
            }
            // No device whose secret nobody received, and nothing of it.
            #expect(try await database.count("device") == 0)
            #expect(try await database.count("lsps5_lsp") == 0)
            #expect(try await database.count("device_challenge") == 0)

            // The same registration without identities is taken whole: the refusal was theirs alone.
            var without = extras
            without.identities = []
            _ = try await store.registerDevice(
                platform: .android, token: "fcm-refused", sealKey: nil, app: Device.defaultApp, extras: without, now: t0)
            #expect(try await database.count("device") == 1)
            #expect(try await database.count("lsps5_lsp") == 1)
            #expect(try await database.count("device_challenge") == 1)
        }
    }

    @Test("a gateway registration that fails keeps the install's earlier device", arguments: Backend.allCases)
    func gatewayRegistrationIsOneTransaction(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, database in
            func gateway(ts: Int64) -> WakeGatewayDevice {
                WakeGatewayDevice(
                    installKey: "bitkit|install-atomic", secretSHA256: "s\(ts)", encryptionKey: "02" + String(repeating: "ee", count: 32),
                    envelope: 1, environment: "production", topics: ["blocktank.*"], registeredTS: ts)
            }
            let first = try await store.registerDevice(
                platform: .ios, token: String(repeating: "ab", count: 32), sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(identities: [alice], wakeGateway: gateway(ts: 100)), now: t0)
            try await database.refuseInserts(into: "wake_gateway_device", backend: backend)
            await #expect(throws: (any Error).self) {
                try await store.registerDevice(
                    platform: .ios, token: String(repeating: "cd", count: 32), sealKey: nil, app: Device.defaultApp,
                    extras: DeviceExtras(identities: [alice], wakeGateway: gateway(ts: 200)), now: t0)
            }
            // The earlier registration's delete went back with the rest.
            #expect(try await database.text("SELECT id FROM device") == first.device.id)
            #expect(try await database.count("device") == 1)
            #expect(try await database.count("device_identity") == 1)
            #expect(try await database.text("SELECT secret_sha256 FROM wake_gateway_device") == "s100")
        }
    }

    @Test("an update whose identity write fails changes nothing: token, seal key, LSP and challenge stay as they were", arguments: Backend.allCases)
    func updateIsOneTransaction(_ backend: Backend) async throws {
        try await withStoreAndDatabase(backend) { store, database in
            let made = try await store.registerDevice(
                platform: .android, token: "fcm-before", sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(lspNodeID: nodeA), now: t0)
            let id = made.device.id
            try await database.refuseInserts(into: "device_identity", backend: backend)
            var changes = DeviceChanges(
                pushToken: .set(.init(platform: .android, token: "fcm-after")), sealKey: .set(keyB), lspNodeID: .set(nodeB),
                identities: .set([alice]), challengeHash: .set(Secrets.hash("code")))
            await #expect(throws: (any Error).self) {
                try await store.updateDevice(id: id, changes: changes, now: t0.addingTimeInterval(60))
            }
            #expect(try await database.text("SELECT token FROM device WHERE id = '\(id)'") == "fcm-before")
            #expect(try await database.text("SELECT seal_key FROM device WHERE id = '\(id)'") == nil)
            #expect(try await database.number("SELECT updated_at FROM device WHERE id = '\(id)'") == t0.timeIntervalSince1970)
            #expect(try await database.text("SELECT node_id FROM lsps5_lsp WHERE device_id = '\(id)'") == nodeA)
            #expect(try await database.count("device_challenge") == 0)
            #expect(try await database.count("device_identity") == 0)

            // Without identities it is taken whole, and answers what the device holds after it.
            changes.identities = .keep
            let updated = try await store.updateDevice(id: id, changes: changes, now: t0.addingTimeInterval(60))
            #expect(updated == UpdatedDevice(lspNodeID: nodeB, identities: []))
            #expect(try await database.text("SELECT token FROM device WHERE id = '\(id)'") == "fcm-after")
            #expect(try await database.text("SELECT seal_key FROM device WHERE id = '\(id)'") == keyB.base64)
            #expect(try await database.number("SELECT updated_at FROM device WHERE id = '\(id)'") == t0.timeIntervalSince1970 + 60)
            #expect(try await database.count("device_challenge WHERE confirmed_at IS NULL") == 1)
            // What it does not name it keeps.
            let kept = try await store.updateDevice(id: id, changes: DeviceChanges(), now: t0.addingTimeInterval(120))
            #expect(kept == UpdatedDevice(lspNodeID: nodeB, identities: []))
            #expect(try await database.number("SELECT updated_at FROM device WHERE id = '\(id)'") == t0.timeIntervalSince1970 + 60)
        }
    }

    @Test("only a token of an alias's forms, current or from before the prefix, is looked up as an alias")
    func aliasForms() {
        #expect(DeviceAlias.couldBeAlias(DeviceAlias.make()))
        #expect(DeviceAlias.couldBeAlias("hostile-final-1234567890"))
        #expect(!DeviceAlias.couldBeAlias(String(repeating: "ef", count: 32)))
        #expect(!DeviceAlias.couldBeAlias("fcm:" + String(repeating: "x", count: 20)))
        #expect(!DeviceAlias.couldBeAlias(String(repeating: "x", count: 25)))
        #expect(!DeviceAlias.couldBeAlias("a." + String(repeating: "x", count: 23)))
    }
}
