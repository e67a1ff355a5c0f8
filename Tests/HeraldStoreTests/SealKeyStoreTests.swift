import Foundation
import HeraldStore
import HeraldWire
import Testing

/// Seal keys on devices and backend sessions, on every back end.
@Suite("Seal keys in the store")
struct SealKeyStoreTests {
    let keyA = try! SealPublicKey(base64: Data(repeating: 0x0a, count: 32).base64EncodedString())
    let keyB = try! SealPublicKey(base64: Data(repeating: 0x0b, count: 32).base64EncodedString())

    @Test(
        "a device's seal key comes with every read, and the webhook lookup follows a change",
        arguments: Backend.allCases)
    func deviceSealKey(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let registration = try await store.registerDevice(
                platform: .ios, token: "61706e732d31", sealKey: keyA, now: t0)
            let alias = registration.device.alias
            #expect(registration.device.sealKey == keyA)
            #expect(try await store.device(alias: alias)?.sealKey == keyA)
            #expect(
                try await store.device(id: registration.device.id, secret: registration.secret)?.sealKey
                    == keyA)
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.sealKey == keyA)

            _ = try await store.updateDevice(id: registration.device.id, changes: DeviceChanges(sealKey: .set(keyB)), now: t0)
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.sealKey == keyB)
            _ = try await store.updateDevice(
                id: registration.device.id, changes: DeviceChanges(pushToken: .set(.init(platform: .ios, token: "61706e732d32"))), now: t0)
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.sealKey == keyB)
            _ = try await store.updateDevice(id: registration.device.id, changes: DeviceChanges(sealKey: .set(nil)), now: t0)
            #expect(try await store.resolveWebhookToken(alias, rawPlatform: nil).device?.sealKey == nil)

            let plain = try await store.registerDevice(platform: .android, token: "fcm-1", now: t0)
            #expect(try await store.device(alias: plain.device.alias)?.sealKey == nil)
        }
    }

    @Test(
        "a session's seal key is written with it, replaced by the next write and given to the fan-out",
        arguments: Backend.allCases)
    func sessionSealKey(_ backend: Backend) async throws {
        try await withStore(backend) { (store: any HeraldStoreBackend) async throws in
            let write = SessionWrite(
                userID: "u", sessionID: "s", platform: .ios, allowNotifications: true, pushToken: "t",
                sealKey: keyA
            )
            #expect(try await store.putSession(write, now: t0))
            #expect(try await store.session(userID: "u", sessionID: "s")?.sealKey == keyA)
            #expect(try await store.pushTargets(userID: "u", now: t0).sessions.map(\.sealKey) == [keyA])

            var cleared = write
            cleared.sealKey = nil
            #expect(try await store.putSession(cleared, now: t0) == false)
            #expect(try await store.session(userID: "u", sessionID: "s")?.sealKey == nil)
            #expect(try await store.sessions(userID: "u").sessions.map(\.sealKey) == [nil])
        }
    }
}
