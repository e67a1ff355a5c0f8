import Foundation
import HeraldStore
import HeraldWire
import Testing

/// LSPS5's LSP node ids and replay memory, on every back end.
@Suite("LSPS5 in the store")
struct LSPS5StoreTests {
    let nodeA = "02" + String(repeating: "a1", count: 32)
    let nodeB = "03" + String(repeating: "b2", count: 32)

    @Test("a device's LSP node id is set, replaced, removed, and goes with the device", arguments: Backend.allCases)
    func nodeIDs(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let device = try await store.registerDevice(platform: .ios, token: "61706e732d6c7370", now: t0).device
            #expect(try await store.lspNodeID(deviceID: device.id) == nil)
            _ = try await store.updateDevice(id: device.id, changes: DeviceChanges(lspNodeID: .set(nodeA)), now: t0)
            #expect(try await store.lspNodeID(deviceID: device.id) == nodeA)
            _ = try await store.updateDevice(id: device.id, changes: DeviceChanges(lspNodeID: .set(nodeB)), now: t0.addingTimeInterval(1))
            #expect(try await store.lspNodeID(deviceID: device.id) == nodeB)
            _ = try await store.updateDevice(id: device.id, changes: DeviceChanges(lspNodeID: .set(nil)), now: t0.addingTimeInterval(2))
            #expect(try await store.lspNodeID(deviceID: device.id) == nil)

            _ = try await store.updateDevice(id: device.id, changes: DeviceChanges(lspNodeID: .set(nodeA)), now: t0)
            try await store.deleteDevice(id: device.id, now: t0)
            #expect(try await store.lspNodeID(deviceID: device.id) == nil)
        }
    }

    @Test(
        "a signature is taken once per device until it expires; a forgotten one is taken again",
        arguments: Backend.allCases)
    func replayMemory(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let expires = t0.addingTimeInterval(600)
            func remember(_ device: String, at now: Date = t0) async throws -> Bool {
                try await store.rememberLSPS5Signature(deviceID: device, signature: "sig-1", expiresAt: expires, now: now)
            }
            let first = try await remember("d1")
            let again = try await remember("d1")
            // Replay memory is per device: another device's webhook may see the same bytes.
            let otherDevice = try await remember("d2")
            let justBeforeExpiry = try await remember("d1", at: t0.addingTimeInterval(599))
            #expect(first && !again && otherDevice && !justBeforeExpiry)
            #expect(try await store.lsps5SignatureCount() == 2)

            try await store.forgetLSPS5Signature(deviceID: "d1", signature: "sig-1")
            let afterForget = try await remember("d1")
            #expect(afterForget)
        }
    }

    @Test("the memory is pruned by age: expired signatures go on the next insert", arguments: Backend.allCases)
    func pruned(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            var taken = 0
            for n in 0..<50 {
                let new = try await store.rememberLSPS5Signature(
                    deviceID: "d1", signature: "old-\(n)", expiresAt: t0.addingTimeInterval(600), now: t0)
                if new { taken += 1 }
            }
            #expect(taken == 50)
            #expect(try await store.lsps5SignatureCount() == 50)
            let later = t0.addingTimeInterval(601)
            let fresh = try await store.rememberLSPS5Signature(
                deviceID: "d1", signature: "new", expiresAt: later.addingTimeInterval(600), now: later)
            #expect(fresh)
            #expect(try await store.lsps5SignatureCount() == 1)
            // An expired signature seen again is past its window anyway: it is taken as new.
            let oldAgain = try await store.rememberLSPS5Signature(
                deviceID: "d1", signature: "old-0", expiresAt: later.addingTimeInterval(600), now: later)
            #expect(oldAgain)
        }
    }

    @Test("of many concurrent inserts of one signature exactly one is taken", arguments: Backend.allCases)
    func concurrent(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        try await store.rememberLSPS5Signature(
                            deviceID: "d1", signature: "same", expiresAt: t0.addingTimeInterval(600), now: t0)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(taken == 1)
        }
    }
}
