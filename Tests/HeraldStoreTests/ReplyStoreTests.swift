import Foundation
import HeraldStore
import HeraldWire
import Testing

/// The durable half of the reply relay and Lightning-address names, on every back end.
@Suite("Store: replies and Lightning addresses")
struct ReplyStoreTests {
    @Test(
        "a reply takes its first live answer; later answers and expired replies are refused",
        arguments: Backend.allCases)
    func answers(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let id = try await store.createReply(
                kind: "invoice_request", now: t0, expiresAt: t0.addingTimeInterval(30))
            #expect(id.count >= 32)
            #expect(try await store.answeredReplies(ids: [id]).isEmpty)
            let answer = ReplyAnswer(body: Data(#"{"pr":"lnbc1"}"#.utf8), cacheMaxAge: 60)
            #expect(
                try await store.answerReply(id: id, answer: answer, now: t0.addingTimeInterval(1))
                    == .accepted)
            #expect(
                try await store.answerReply(
                    id: id, answer: ReplyAnswer(body: Data()), now: t0.addingTimeInterval(2))
                    == .alreadyAnswered)
            #expect(try await store.answeredReplies(ids: [id, "other"]) == [id: answer])
            #expect(try await store.answerReply(id: "unknown", answer: answer, now: t0) == .unknown)
            // Expiring an answered reply hands back the answer that arrived meanwhile.
            #expect(try await store.expireReply(id: id, now: t0.addingTimeInterval(3)) == answer)

            let late = try await store.createReply(
                kind: "lnurlpay_info", now: t0, expiresAt: t0.addingTimeInterval(30))
            #expect(
                try await store.answerReply(id: late, answer: answer, now: t0.addingTimeInterval(31))
                    == .expired)
            let gaveUp = try await store.createReply(
                kind: "lnurlpay_info", now: t0, expiresAt: t0.addingTimeInterval(30))
            #expect(try await store.expireReply(id: gaveUp, now: t0.addingTimeInterval(5)) == nil)
            #expect(
                try await store.answerReply(id: gaveUp, answer: answer, now: t0.addingTimeInterval(6))
                    == .expired)
            #expect(try await store.replyCounts() == ReplyCounts(pending: 1, answered: 1, expired: 1))
            // The expired one's expiry moved to when it was given up.
            #expect(try await store.purgeReplies(expiredBefore: t0.addingTimeInterval(6)) == 1)
            #expect(try await store.purgeReplies(expiredBefore: t0.addingTimeInterval(31)) == 2)
        }
    }

    @Test(
        "one owner's cached answers stay within its budget; a replaced answer, an expired one and another owner's do not count",
        arguments: Backend.allCases)
    func cacheBudget(_ backend: Backend) async throws {
        let answer: @Sendable (Int) -> ReplyAnswer = { ReplyAnswer(body: Data(repeating: 0x61, count: $0), cacheMaxAge: 60) }
        try await withStore(backend) { (store: any HeraldStoreBackend) async throws in
            let budget = CacheBudget(prefix: "dev:1:", maxBytes: 150)
            let later = t0.addingTimeInterval(60)
            #expect(try await store.cacheReply(key: "dev:1:a", answer: answer(100), until: later, budget: budget, now: t0))
            #expect(try await store.cacheReply(key: "dev:1:b", answer: answer(100), until: later, budget: budget, now: t0) == false)
            #expect(try await store.cachedReply(key: "dev:1:b", now: t0) == nil)
            #expect(try await store.cacheReply(key: "dev:1:a", answer: answer(140), until: later, budget: budget, now: t0))
            #expect(
                try await store.cacheReply(
                    key: "dev:2:a", answer: answer(140), until: later, budget: CacheBudget(prefix: "dev:2:", maxBytes: 150), now: t0))
            // Once the first has expired, there is room again.
            #expect(try await store.cacheReply(key: "dev:1:b", answer: answer(100), until: later.addingTimeInterval(60), budget: budget, now: later))
        }
    }

    @Test(
        "cached answers are served until they expire and removed by prefix", arguments: Backend.allCases
    )
    func cache(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let answer = ReplyAnswer(body: Data("{}".utf8), cacheMaxAge: 60)
            try await store.cacheReply(
                key: "info:al_ice", answer: answer, until: t0.addingTimeInterval(60))
            try await store.cacheReply(
                key: "info:alxice", answer: answer, until: t0.addingTimeInterval(60))
            #expect(try await store.cachedReply(key: "info:al_ice", now: t0) == answer)
            #expect(
                try await store.cachedReply(key: "info:al_ice", now: t0.addingTimeInterval(60)) == nil)
            // '_' is no wildcard: only the first key goes.
            try await store.removeCachedReplies(prefix: "info:al_")
            #expect(try await store.cachedReply(key: "info:al_ice", now: t0) == nil)
            #expect(try await store.cachedReply(key: "info:alxice", now: t0) == answer)
            #expect(try await store.purgeCachedReplies(now: t0.addingTimeInterval(61)) == 1)
        }
    }

    @Test(
        "a username belongs to one device; a rename frees the old name; deleting the device frees it",
        arguments: Backend.allCases)
    func usernames(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let alice = try await store.registerDevice(platform: .ios, token: "61", now: t0).device
            let bob = try await store.registerDevice(platform: .android, token: "b", now: t0).device
            #expect(
                try await store.claimUsername("alice", deviceID: alice.id, now: t0)
                    == .claimed(previous: nil))
            #expect(try await store.claimUsername("alice", deviceID: alice.id, now: t0) == .unchanged)
            #expect(try await store.claimUsername("alice", deviceID: bob.id, now: t0) == .taken)
            #expect(
                try await store.claimUsername("alice2", deviceID: alice.id, now: t0)
                    == .claimed(previous: "alice"))
            #expect(try await store.lightningAddress(username: "alice") == nil)
            #expect(try await store.lightningAddress(deviceID: alice.id)?.username == "alice2")

            let info = StoredPayInfo(
                minSendable: 1_000, maxSendable: 5_000, metadata: #"[["text/plain","hi"]]"#,
                commentAllowed: 32)
            try await store.savePayInfo(info, username: "alice2", deviceID: alice.id, now: t0)
            let address = try #require(try await store.lightningAddress(username: "alice2"))
            #expect(address.device == alice)
            #expect(address.payInfo == info)

            #expect(try await store.releaseUsername(deviceID: alice.id) == "alice2")
            #expect(try await store.releaseUsername(deviceID: alice.id) == nil)
            #expect(
                try await store.claimUsername("bob", deviceID: bob.id, now: t0) == .claimed(previous: nil))
            try await store.deleteDevice(id: bob.id, now: t0)
            #expect(try await store.lightningAddress(username: "bob") == nil)
        }
    }
}
