import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// `/api/v1/admin/…` against a real store and, for delivery, the APNs look-alike.
@Suite("Admin API: dead letters and the outbox")
struct AdminTests {
    static let swap = APNsDeliveryTests.swap

    @Test("a job that expires while APNs answers 503 is a dead letter with its reason; replayed after APNs recovers, it is delivered exactly once")
    func expiredThenReplayedOnce() async throws {
        let nds = try TestNDS(jobTTL: .seconds(1))
        let admin = try await nds.apiKey([.admin])
        let token = String(repeating: "5a", count: 32)
        try await APNsDeliveryTests().withAPNs { mock, providers in
            await mock.script.always(.serviceUnavailable(retryAfter: nil), for: token)
            try await nds.app(providers: providers).test(.live) { client in
                let sent = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(sent.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .dead })
                let refusedBefore = await mock.requests.all.filter { $0.deviceToken == token }.count
                #expect(refusedBefore >= 2)

                let list = try await client.call(.get, "/api/v1/admin/dead-letters?reason=ttl_expired&platform=ios", key: admin)
                #expect(list.status == .ok)
                let letters = try #require(list.json["dead_letters"] as? [[String: Any]])
                #expect(letters.count == 1)
                let letter = try #require(letters.first)
                #expect(letter["id"] as? String == id)
                #expect(letter["reason"] as? String == "ttl_expired")
                #expect((letter["provider_answer"] as? String)?.contains("503") == true)
                #expect(letter["token"] as? String == "5a5a5a…")  // redacted
                #expect(letter["notification_type"] as? String == "swap_updated")
                #expect(letter["attempts"] as? Int == refusedBefore)
                #expect(letter["first_attempt_at"] is String)
                #expect(letter["last_attempt_at"] is String)

                // APNs recovers; the replay is delivered, once.
                await mock.script.clear(token)
                let replay = try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin)
                #expect(replay.status == .created)
                let newJob = try #require(replay.json["job_id"] as? String)
                #expect(newJob != id)
                #expect(try await eventually { try await nds.store.status(jobID: newJob)?.state == .delivered })
                let again = try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin)
                #expect(again.status == .ok)
                #expect(again.json["replayed"] as? Bool == false)
                #expect(again.json["job_id"] as? String == newJob)
                // Every job finished (the letter dead, its replay delivered): nothing is left that could send.
                #expect(try await nds.store.counts().pending == 0)
                let toToken = await mock.requests.all.filter { $0.deviceToken == token }
                #expect(toToken.filter(\.accepted).count == 1)
                #expect(toToken.count == refusedBefore + 1)
                // The replayed push carries a fresh expiry, not the letter's, long past.
                let expiration = Int(toToken.last?.headers["apns-expiration"] ?? "") ?? 0
                #expect(expiration > Int(Date().timeIntervalSince1970))
                let after = try await client.call(.get, "/api/v1/admin/dead-letters", key: admin)
                #expect((after.json["dead_letters"] as? [Any])?.isEmpty == true)
            }
        }
    }

    @Test(
        "a job that expires while APNs stalls (no answer within the send timeout) is a dead letter; replayed after APNs recovers, it is delivered exactly once"
    )
    func stalledThenReplayedOnce() async throws {
        let nds = try TestNDS(jobTTL: .seconds(2))
        let admin = try await nds.apiKey([.admin])
        let token = String(repeating: "6b", count: 32)
        try await APNsDeliveryTests().withAPNs(requestTimeout: .milliseconds(400)) { mock, providers in
            await mock.script.always(.stalled(for: .seconds(3)), for: token)
            try await nds.app(providers: providers).test(.live) { client in
                let sent = try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap)
                let id = try #require(sent.json["id"] as? String)
                #expect(try await eventually(timeout: .seconds(15)) { try await nds.store.status(jobID: id)?.state == .dead })
                let stalled = await mock.requests.all.filter { $0.deviceToken == token }.count
                let list = try await client.call(.get, "/api/v1/admin/dead-letters?reason=ttl_expired", key: admin)
                let letter = try #require((list.json["dead_letters"] as? [[String: Any]])?.first)
                #expect(letter["id"] as? String == id)
                #expect(letter["reason"] as? String == "ttl_expired")
                #expect((letter["attempts"] as? Int ?? 0) >= 1)

                await mock.script.clear(token)
                let replay = try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin)
                #expect(replay.status == .created)
                let newJob = try #require(replay.json["job_id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: newJob)?.state == .delivered })
                // Stalled requests still being answered late must not count: only the replay is accepted.
                // Every job finished: nothing is left that could send again.
                #expect(try await nds.store.counts().pending == 0)
                let toToken = await mock.requests.all.filter { $0.deviceToken == token }
                #expect(toToken.filter { $0.accepted && $0.answer.stall == nil }.count == 1)
                #expect(toToken.filter { $0.answer.stall == nil }.count == 1, "\(stalled) stalled before")
            }
        }
    }

    @Test("the admin routes need a key with the admin scope")
    func auth() async throws {
        let nds = try TestNDS()
        let sessions = try await nds.apiKey([.sessions, .events, .wake])
        try await nds.app().test(.router) { client in
            for (method, path) in [
                (HTTPRequest.Method.get, "/api/v1/admin/dead-letters"), (.post, "/api/v1/admin/dead-letters/x/replay"),
                (.post, "/api/v1/admin/dead-letters/replay"), (.delete, "/api/v1/admin/dead-letters"),
                (.delete, "/api/v1/admin/dead-letters/x"), (.get, "/api/v1/admin/outbox"),
            ] {
                #expect(try await client.call(method, path, key: nil).status == .unauthorized, "\(path)")
                let forbidden = try await client.call(method, path, key: sessions)
                #expect(forbidden.status == .forbidden, "\(path)")
                #expect((forbidden.json["message"] as? String)?.contains("admin") == true)
            }
        }
    }

    @Test("replays are refused with 409 for a dead token and 404 for no letter; bad filters are 400")
    func refusals() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        let id = try await nds.deadLetter(token: "676f6e652d746f6b656e2d30303031", reason: "ttl_expired")
        try await nds.store.markDead(platform: .ios, token: "676f6e652d746f6b656e2d30303031", reason: "Unregistered", now: Date())
        try await nds.app().test(.router) { client in
            let dead = try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin)
            #expect(dead.status == .conflict)
            #expect(dead.json["error"] as? String == "token_dead")
            let missing = try await client.call(.post, "/api/v1/admin/dead-letters/nope/replay", key: admin)
            #expect(missing.status == .notFound)
            #expect(missing.json["error"] as? String == "dead_letter_not_found")
            for (query, code) in [
                ("platform=windows", "unknown_platform"), ("limit=0", "invalid_limit"), ("limit=x", "invalid_limit"),
                ("cursor=%%%", "invalid_cursor"), ("reason=a%20b", "invalid_reason"),
            ] {
                let bad = try await client.call(.get, "/api/v1/admin/dead-letters?\(query)", key: admin)
                #expect(bad.status == .badRequest, "\(query)")
                #expect(bad.json["error"] as? String == code, "\(query)")
            }
        }
    }

    @Test("replay and purge by filter, pages with a cursor, and the outbox's counts")
    func bulk() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        var made: [String] = []
        for index in 0..<3 { made.append(try await nds.deadLetter(token: "tok-bulk-000\(index)", reason: "ttl_expired: 503")) }
        let expired = made
        let permanent = try await nds.deadLetter(token: "tok-perm-0001", reason: "permanent: 400 BadTopic")
        try await nds.app().test(.router) { client in
            let page1 = try await client.call(.get, "/api/v1/admin/dead-letters?limit=3", key: admin)
            let cursor = try #require(page1.json["next_cursor"] as? String)
            let page2 = try await client.call(.get, "/api/v1/admin/dead-letters?limit=3&cursor=\(cursor)", key: admin)
            let ids = ((page1.json["dead_letters"] as? [[String: Any]] ?? []) + (page2.json["dead_letters"] as? [[String: Any]] ?? []))
                .compactMap { $0["id"] as? String }
            #expect(Set(ids) == Set(expired + [permanent]))
            #expect(page2.json["next_cursor"] == nil)

            let replayed = try await client.call(.post, "/api/v1/admin/dead-letters/replay?reason=ttl_expired", key: admin)
            #expect(replayed.status == .ok)
            #expect(replayed.json["replayed"] as? Int == 3)
            #expect(replayed.json["skipped_token_dead"] as? Int == 0)
            let twice = try await client.call(.post, "/api/v1/admin/dead-letters/replay?reason=ttl_expired", key: admin)
            #expect(twice.json["replayed"] as? Int == 0)

            let outbox = try await client.call(.get, "/api/v1/admin/outbox", key: admin)
            #expect(outbox.status == .ok)
            #expect(outbox.json["dead_letters"] as? Int == 1)
            let total = outbox.json["total"] as? Int ?? -1
            #expect(total >= 0 && total <= 3)  // the dispatcher may have sent some already
            #expect(outbox.json["by_platform"] is [String: Any])
            #expect(outbox.json["by_app"] is [String: Any])

            let purged = try await client.call(.delete, "/api/v1/admin/dead-letters?reason=permanent", key: admin)
            #expect(purged.json["purged"] as? Int == 1)
            #expect(purged.json["replayed"] as? Int == 0)
            #expect(try await client.call(.delete, "/api/v1/admin/dead-letters/\(expired[0])", key: admin).status == .noContent)
            #expect(try await client.call(.delete, "/api/v1/admin/dead-letters/\(expired[0])", key: admin).status == .notFound)
        }
    }

    @Test("twenty concurrent replays of one letter over HTTP make one job")
    func concurrentReplays() async throws {
        let nds = try TestNDS()
        let admin = try await nds.apiKey([.admin])
        let id = try await nds.deadLetter(token: "tok-race-0001", reason: "ttl_expired")
        try await nds.app().test(.live) { client in
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await client.call(.post, "/api/v1/admin/dead-letters/\(id)/replay", key: admin)
                        return (response.status, response.json["job_id"] as? String)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            #expect(answers.filter { $0.0 == .created }.count == 1)
            #expect(answers.filter { $0.0 == .ok }.count == 19)
            #expect(Set(answers.compactMap(\.1)).count == 1)
            let counts = try await nds.store.counts()
            #expect(counts.pending + counts.delivered == 1)
        }
    }
}

extension TestNDS {
    /// A dead letter made as the dispatcher makes one: enqueued, tried, given up on.
    func deadLetter(token: String, reason: String) async throws -> String {
        let new = NewJob(
            destination: .device(.ios), token: TestToken.apns(token), notificationType: "swap_updated",
            payload: PushMessageFixture.storedSwap, idempotencyKey: nil, expiresAt: Date().addingTimeInterval(600), app: Device.defaultApp
        )
        _ = try await store.enqueue([new], now: Date(), leaseUntil: Date().addingTimeInterval(60))
        try await store.complete(
            [JobCompletion(job: OutboxJob(new, createdAt: Date()), resolution: .deadLetter(reason: reason, answer: "503 ServiceUnavailable"))],
            now: Date()
        )
        return new.id
    }
}

/// A stored push as intake writes one.
enum PushMessageFixture {
    static let storedSwap = PushMessage.wake(
        PushData(notificationType: .swapUpdated, notificationPayload: #"{"id":"s1"}"#, appData: nil)
    ).storedJSON()
}
