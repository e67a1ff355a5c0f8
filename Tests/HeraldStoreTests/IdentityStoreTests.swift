import Foundation
import HeraldStore
import HeraldWire
import Testing

/// The identities devices proved, on every back end.
@Suite("Identities in the store")
struct IdentityStoreTests {
    let alice = "ln:02" + String(repeating: "a1", count: 32)
    let pubky = "pk:" + String(repeating: "y", count: 52)

    @Test("a registration's LSP, identities and challenge are written with the device", arguments: Backend.allCases)
    func extras(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let node = "02" + String(repeating: "c4", count: 32)
            let made = try await store.registerDevice(
                platform: .android, token: "fcm-extras", sealKey: nil, app: Device.defaultApp,
                extras: DeviceExtras(lspNodeID: node, identities: [alice, pubky], challengeHash: Secrets.hash("code")), now: t0)
            #expect(try await store.lspNodeID(deviceID: made.device.id) == node)
            #expect(try await store.identities(deviceID: made.device.id) == [alice, pubky])
            #expect(try await store.isUnconfirmed(deviceID: made.device.id))
            #expect(try await store.confirmChallenge(deviceID: made.device.id, codeHash: Secrets.hash("code"), now: t0))
            #expect(try await !store.isUnconfirmed(deviceID: made.device.id))
            // None of them: a device alone.
            let bare = try await store.registerDevice(platform: .android, token: "fcm-bare", now: t0)
            #expect(try await store.lspNodeID(deviceID: bare.device.id) == nil)
            #expect(try await store.identities(deviceID: bare.device.id).isEmpty)
            #expect(try await !store.isUnconfirmed(deviceID: bare.device.id))
        }
    }

    @Test("identities are set, replaced, found by identity with each token's deadness, and go with the device", arguments: Backend.allCases)
    func identities(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let phone = try await store.registerDevice(platform: .ios, token: "70686f6e65", now: t0).device
            let tablet = try await store.registerDevice(platform: .android, token: "fcm-tablet", now: t0).device
            #expect(try await store.identities(deviceID: phone.id).isEmpty)
            _ = try await store.updateDevice(id: phone.id, changes: DeviceChanges(identities: .set([alice, pubky, alice])), now: t0)
            _ = try await store.updateDevice(id: tablet.id, changes: DeviceChanges(identities: .set([alice])), now: t0)
            #expect(try await store.identities(deviceID: phone.id) == [alice, pubky])
            let found = try await store.devices(identity: alice)
            #expect(Set(found.compactMap(\.device?.id)) == [phone.id, tablet.id])
            #expect(found.allSatisfy { !$0.isDead })

            try await store.markDead(platform: .android, token: "fcm-tablet", reason: "Unregistered", now: t0)
            #expect(try await store.devices(identity: alice).first { $0.device?.id == tablet.id }?.isDead == true)

            // Replaced: pk: kept, ln: dropped.
            _ = try await store.updateDevice(id: phone.id, changes: DeviceChanges(identities: .set([pubky])), now: t0.addingTimeInterval(1))
            #expect(try await store.identities(deviceID: phone.id) == [pubky])
            #expect(try await store.devices(identity: alice).compactMap(\.device?.id) == [tablet.id])
            _ = try await store.updateDevice(id: phone.id, changes: DeviceChanges(identities: .set([])), now: t0.addingTimeInterval(2))
            #expect(try await store.devices(identity: pubky).isEmpty)

            try await store.deleteDevice(id: tablet.id, now: t0)
            #expect(try await store.devices(identity: alice).isEmpty)
        }
    }
}
