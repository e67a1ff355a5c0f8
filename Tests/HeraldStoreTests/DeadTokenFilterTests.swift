import Foundation
import HeraldStore
import HeraldWire
import Testing

@testable import HeraldSQLite

/// The SQLite store answers "not dead" for a raw token from a Bloom filter instead of a read: it
/// must never say so of a token that is dead, whoever marked it and whenever.
@Suite("SQLite store: dead-token filter")
struct DeadTokenFilterTests {
    @Test("never forgets a token; says maybe of few it was not told of")
    func noFalseNegatives() {
        let filter = DeadTokenFilter()
        let dead = (0..<20_000).map { String(format: "%064x", $0) }
        for token in dead { filter.insert(platform: .ios, token: token) }
        #expect(dead.allSatisfy { filter.mightContain(platform: .ios, token: $0) })
        // The same tokens on the other platform, and tokens never inserted, are mostly absent.
        let others = (20_000..<40_000).map { String(format: "%064x", $0) }
        let falsePositives = others.count { filter.mightContain(platform: .ios, token: $0) }
        let otherPlatform = dead.count { filter.mightContain(platform: .android, token: $0) }
        #expect(falsePositives < 20 && otherPlatform < 20, "\(falsePositives), \(otherPlatform) of 20,000")

        // Overfull: most answers become "maybe", still none is a wrong "no".
        let small = DeadTokenFilter(bits: 1_024)
        for token in dead { small.insert(platform: .ios, token: token) }
        #expect(dead.allSatisfy { small.mightContain(platform: .ios, token: $0) })
    }

    @Test("a raw token marked dead, by a send's outcome or directly, resolves dead, also after the file is reopened")
    func markedDeadResolvesDead() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("herald.sqlite").path
        let byOutcome = String(repeating: "d1", count: 32)
        let direct = String(repeating: "d2", count: 32)
        let alive = String(repeating: "a1", count: 32)

        let store = try await SQLiteStore.open(path: path)
        // Looked up (and so cached) while alive: the mark must clear that answer too.
        #expect(try await store.resolveWebhookToken(byOutcome, rawPlatform: .ios).isDead == false)
        _ = try await store.enqueue([job(byOutcome)], now: t0, leaseUntil: t0.addingTimeInterval(60))
        let claimed = try await store.claimDue(now: t0.addingTimeInterval(120), leaseUntil: t0.addingTimeInterval(180), limit: 1)
        try await store.complete(claimed.map { JobCompletion(job: $0, resolution: .tokenDead(reason: "Unregistered")) }, now: t0)
        try await store.markDead(platform: .android, token: direct, reason: "UNREGISTERED", now: t0)

        for current in [store, try await SQLiteStore.open(path: path)] {
            #expect(try await current.resolveWebhookToken(byOutcome, rawPlatform: .ios).isDead)
            #expect(try await current.resolveWebhookToken(direct, rawPlatform: .android).isDead)
            #expect(try await current.resolveWebhookToken(direct, rawPlatform: .ios).isDead == false, "dead on its own platform only")
            #expect(try await current.resolveWebhookToken(alive, rawPlatform: .ios).isDead == false)
        }
    }
}
