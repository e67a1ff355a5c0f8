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
