import Foundation
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Testing

/// Zap requests kept until their payment is reported, on every back end and across instances.
@Suite("Zaps in the store")
struct ZapStoreTests {
    static func zap(_ hash: String, device: String = "d1", request: String = #"{"kind":9734}"#, at time: Date = t0) -> StoredZap {
        StoredZap(paymentHash: hash, deviceID: device, request: request, bolt11: "lnbcrt210n1…", createdAt: time)
    }

    @Test("a zap is kept by payment hash; a second save keeps the first; old ones are purged", arguments: Backend.allCases)
    func keep(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let hash = String(repeating: "ab", count: 32)
            #expect(try await store.zap(paymentHash: hash) == nil)
            try await store.saveZap(Self.zap(hash, request: #"{"first":true}"#))
            try await store.saveZap(Self.zap(hash, device: "d2", request: #"{"second":true}"#))
            let kept = try await store.zap(paymentHash: hash)
            #expect(kept == Self.zap(hash, request: #"{"first":true}"#))
            let old = String(repeating: "cd", count: 32)
            try await store.saveZap(Self.zap(old, at: t0.addingTimeInterval(-86_400 * 8)))
            #expect(try await store.purgeZaps(before: t0.addingTimeInterval(-86_400 * 7)) == 1)
            #expect(try await store.zap(paymentHash: old) == nil)
            #expect(try await store.zap(paymentHash: hash) != nil)
        }
    }

    @Test("two instances on one PostgreSQL database see each other's zaps; concurrent saves keep one")
    func instances() async throws {
        let database = try await ThrowawayPostgres.shared.makeDatabase()
        try await withPostgresStores(on: database, count: 2) { stores in
            let hash = String(repeating: "ef", count: 32)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask { try await store.saveZap(Self.zap(hash, device: "d\(index)")) }
                }
                try await group.waitForAll()
            }
            let seen = try await [stores[0].zap(paymentHash: hash), stores[1].zap(paymentHash: hash)]
            #expect(seen[0] != nil && seen[0] == seen[1])
        }
    }
}
