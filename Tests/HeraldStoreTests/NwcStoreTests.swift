import Foundation
import HeraldStore
import Testing

/// Nostr Wallet Connect registrations and forwarded events, on every back end.
@Suite("NWC in the store")
struct NwcStoreTests {
    static let wallet = String(repeating: "a1", count: 32)
    static let owner = "02" + String(repeating: "b2", count: 32)

    static func registration(app: String, owner: String = owner, relays: [String] = ["wss://relay.one", "wss://relay.two"]) -> NwcRegistration {
        NwcRegistration(
            walletServicePubkey: wallet, appPubkey: app, ownerPubkey: owner, webhookURL: "https://nds.example/api/v1/notify?token=a.x",
            relays: relays, createdAt: t0, lastUsedAt: t0)
    }

    @Test(
        "registrations are put, replaced, bounded per owner and removed only by their owner; another key's of the same pair is its own",
        arguments: Backend.allCases)
    func registrations(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let apps = (0..<3).map { String(repeating: "c\($0)", count: 32) }
            #expect(try await store.putNwcRegistration(Self.registration(app: apps[0]), limit: 2) == .stored)
            #expect(try await store.putNwcRegistration(Self.registration(app: apps[1]), limit: 2) == .stored)
            #expect(try await store.putNwcRegistration(Self.registration(app: apps[2]), limit: 2) == .limitReached)
            // Replacing one already held is not a new one.
            #expect(try await store.putNwcRegistration(Self.registration(app: apps[1], relays: ["wss://relay.three"]), limit: 2) == .stored)
            // Another key's registration of the same pair is its own: it replaces nothing.
            let other = "03" + String(repeating: "f6", count: 32)
            #expect(try await store.putNwcRegistration(Self.registration(app: apps[1], owner: other), limit: 2) == .stored)
            let stored = try await store.nwcRegistrations()
            #expect(stored.map(\.appPubkey) == [apps[0], apps[1], apps[1]])
            #expect(stored.filter { $0.appPubkey == apps[1] }.map(\.ownerPubkey) == [Self.owner, other])
            #expect(stored.first { $0.ownerPubkey == Self.owner && $0.appPubkey == apps[1] }?.relays == ["wss://relay.three"])
            #expect(stored[0].relays == ["wss://relay.one", "wss://relay.two"])

            let stranger = "03" + String(repeating: "d4", count: 32)
            #expect(try await !store.deleteNwcRegistration(walletServicePubkey: Self.wallet, appPubkey: apps[0], owner: stranger))
            #expect(try await store.deleteNwcRegistration(walletServicePubkey: Self.wallet, appPubkey: apps[0], owner: Self.owner))
            #expect(try await store.deleteNwcRegistration(walletServicePubkey: Self.wallet, appPubkey: apps[1], owner: other))
            #expect(try await store.nwcRegistrations().map(\.ownerPubkey) == [Self.owner])
        }
    }

    @Test(
        "an event is claimed once; the cursor is when the newest was received, whatever it claims; old events and unused registrations are purged",
        arguments: Backend.allCases)
    func events(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let app = String(repeating: "c0", count: 32)
            let unused = String(repeating: "c9", count: 32)
            _ = try await store.putNwcRegistration(Self.registration(app: app), limit: 10)
            _ = try await store.putNwcRegistration(Self.registration(app: unused), limit: 10)
            #expect(try await store.nwcCursors()[Self.wallet] == nil)
            let later = t0.addingTimeInterval(86_400 * 20)
            #expect(try await store.claimNwcEvent(id: "e1", walletServicePubkey: Self.wallet, appPubkey: app, createdAt: 1_800_000_100, now: later))
            #expect(try await !store.claimNwcEvent(id: "e1", walletServicePubkey: Self.wallet, appPubkey: app, createdAt: 1_800_000_100, now: later))
            // Dated ten years ahead, received a second later: the cursor moves a second.
            #expect(
                try await store.claimNwcEvent(
                    id: "e2", walletServicePubkey: Self.wallet, appPubkey: app, createdAt: 2_115_000_000, now: later.addingTimeInterval(1.5)))
            #expect(try await store.nwcCursors()[Self.wallet] == Int64(later.timeIntervalSince1970) + 1)
            // Thirty days on: the registration that forwarded nothing goes, the used one stays.
            let gone = try await store.purgeNwc(seenBefore: later.addingTimeInterval(-1), unusedBefore: t0.addingTimeInterval(86_400 * 10))
            #expect(gone == 1)
            #expect(try await store.nwcRegistrations().map(\.appPubkey) == [app])
            #expect(try await store.claimNwcEvent(id: "e9", walletServicePubkey: Self.wallet, appPubkey: app, createdAt: 1, now: later))
            _ = try await store.purgeNwc(seenBefore: later.addingTimeInterval(2), unusedBefore: t0)
            #expect(try await store.nwcCursors()[Self.wallet] == nil)
        }
    }

    @Test("a wallet's subscription lease: one instance holds it, renews it, and another takes it once it runs out", arguments: Backend.allCases)
    func leases(_ backend: Backend) async throws {
        try await withStore(backend) { (store) async throws in
            let wallets = [Self.wallet, String(repeating: "e5", count: 32)]
            let until = t0.addingTimeInterval(30)
            #expect(try await store.leaseNwcWallets(wallets, owner: "a", now: t0, until: until) == Set(wallets))
            // One process on SQLite holds every lease; several on PostgreSQL share them.
            let taken = try await store.leaseNwcWallets(wallets, owner: "b", now: t0.addingTimeInterval(10), until: until.addingTimeInterval(10))
            guard backend == .postgres else {
                #expect(taken == Set(wallets))
                return
            }
            #expect(taken.isEmpty)
            // A renews one only; past the other's lease, B takes it.
            #expect(
                try await store.leaseNwcWallets([wallets[0]], owner: "a", now: t0.addingTimeInterval(20), until: t0.addingTimeInterval(60)) == [
                    wallets[0]
                ])
            #expect(
                try await store.leaseNwcWallets(wallets, owner: "b", now: t0.addingTimeInterval(31), until: t0.addingTimeInterval(61)) == [wallets[1]]
            )
            #expect(try await store.leaseNwcWallets([], owner: "b", now: t0, until: until).isEmpty)
        }
    }
}
