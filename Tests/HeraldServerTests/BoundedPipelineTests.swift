import Foundation
import GRDB
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Load costs disk, never unbounded memory: every queue in front of the store and the
/// providers has a cap, and past it a caller is told to come back.
@Suite("The bounded pipeline")
struct BoundedPipelineTests {
    static func swap(_ id: String) -> String { #"{"event":"swap.update","data":{"id":"\#(id)","status":"transaction.mempool"}}"# }

    /// Another connection holding SQLite's write lock: the server's commits wait on their busy
    /// timeout until ``release()``.
    struct WriteLock {
        let queue: DatabaseQueue

        static func take(on path: String) async throws -> WriteLock {
            var configuration = Configuration()
            configuration.allowsUnsafeTransactions = true  // the transaction outlives one access
            configuration.busyMode = .timeout(10)  // the server may be writing as the lock is taken
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try await queue.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
            return WriteLock(queue: queue)
        }

        func release() async throws {
            try await queue.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        }
    }

    @Test("past the intake cap a webhook is 503 overloaded and not enqueued; those accepted commit once the store is free")
    func intakeCap() async throws {
        var configured = try TestNDS()
        configured.intake.maxPending = 4
        let nds = configured
        try await nds.app().test(.router) { client in
            let lock = try await WriteLock.take(on: nds.store.path)
            let answers = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                for n in 0..<10 {
                    group.addTask {
                        (n, try await client.post("/api/v1/notify?platform=ios&token=6361702d\(String(format: "%04x", n))", json: Self.swap("s\(n)")))
                    }
                }
                // While the store is stalled only the refusals can come back: four jobs wait for
                // their commit, and nothing past them was taken.
                var answers: [(Int, TestResponse)] = []
                for try await answer in group {
                    answers.append(answer)
                    if answers.count == 6 {
                        for (_, refused) in answers {
                            #expect(refused.status == .serviceUnavailable)
                            #expect(refused.json["error"] as? String == "overloaded")
                            #expect(refused.headers[.retryAfter] == "1")
                        }
                        try await lock.release()
                    }
                }
                return answers
            }
            let accepted = answers.filter { $0.1.status == .ok }.map(\.0)
            let refused = answers.filter { $0.1.status == .serviceUnavailable }.map(\.0)
            #expect(accepted.count == 4)
            #expect(refused.count == 6)
            #expect(try await eventually { try await nds.store.counts().delivered == 4 })
            for n in accepted {
                #expect(
                    try await nds.store.localPushes(platform: .ios, token: "6361702d\(String(format: "%04x", n))", after: 0, limit: 10).count == 1)
            }
            for n in refused {
                #expect(try await nds.store.localPushes(platform: .ios, token: "6361702d\(String(format: "%04x", n))", after: 0, limit: 10).isEmpty)
            }
            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 4, dead: 0))
        }
    }

    @Test("a device token takes a burst of 20 pushes, then 429 target_rate_limited until its allowance refills; other tokens pass")
    func targetRateLimit() async throws {
        let nds = try TestNDS()
        #expect(nds.settings.targetPushesPerMinute == 60 && nds.settings.targetPushBurst == 20)
        let clock = TestClock()
        try await nds.app(now: clock.function).test(.router) { client in
            for n in 0..<20 {
                let accepted = try await client.post("/api/v1/notify?platform=ios&token=7370616d6d6564", json: Self.swap("s\(n)"))
                #expect(accepted.status == .ok, "push \(n + 1)")
            }
            let limited = try await client.post("/api/v1/notify?platform=ios&token=7370616d6d6564", json: Self.swap("s20"))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.json["error"] as? String == "target_rate_limited")
            #expect(limited.headers[.retryAfter] == "1")  // one push a second refills
            // A relayed request is refused the same way, before any reply URL is opened.
            let relayed = try await client.post(
                "/api/v1/notify?platform=ios&token=7370616d6d6564",
                json: #"{"event":"invoice.request","data":{"offer":"lno1","invoiceRequest":"lnr1"}}"#
            )
            #expect(relayed.status == .tooManyRequests)
            #expect(relayed.json["error"] as? String == "target_rate_limited")
            #expect(try await nds.store.replyCounts().total == 0)

            let other = try await client.post("/api/v1/notify?platform=ios&token=7175696574", json: Self.swap("q"))
            #expect(other.status == .ok)

            clock.advance(by: .seconds(1))
            let refilled = try await client.post("/api/v1/notify?platform=ios&token=7370616d6d6564", json: Self.swap("s21"))
            #expect(refilled.status == .ok)
            let again = try await client.post("/api/v1/notify?platform=ios&token=7370616d6d6564", json: Self.swap("s22"))
            #expect(again.status == .tooManyRequests)

            // Only what was accepted was stored and pushed.
            #expect(try await eventually { try await nds.store.counts().delivered == 22 })
            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 22, dead: 0))
            #expect(try await nds.store.localPushes(platform: .ios, token: "7370616d6d6564", after: 0, limit: 100).count == 21)
        }
    }

    static let invoiceRequest = #"{"event":"invoice.request","data":{"offer":"lno1","invoiceRequest":"lnr1"}}"#

    @Test("past the cap on held requests one that would be held is 503 overloaded, with nothing stored or pushed for it")
    func heldRepliesCap() async throws {
        var configured = try TestNDS()
        configured.settings.maxHeldReplies = 1
        let nds = configured
        let phone = TestPhone(nds: nds, platform: .ios, token: "68656c642d70686f6e65")
        try await nds.app().test(.router) { client in
            async let held = client.post("/api/v1/notify?platform=ios&token=68656c642d70686f6e65", json: Self.invoiceRequest)
            let replyURL = try #require(try await phone.pushes(after: 0).first?.replyURL)

            let refused = try await client.post("/api/v1/notify?platform=ios&token=7365636f6e642d70686f6e65", json: Self.invoiceRequest)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.json["error"] as? String == "overloaded")
            #expect(refused.headers[.retryAfter] == "1")
            #expect(try await nds.store.replyCounts().total == 1)
            #expect(try await nds.store.localPushes(platform: .ios, token: "7365636f6e642d70686f6e65", after: 0, limit: 1).isEmpty)

            // Once the held request is answered its slot is free again.
            let answered = try await client.post(
                String(replyURL.dropFirst("http://nds.test".count)), json: #"{"invoice":"lni1first"}"#
            )
            #expect(answered.status == .ok)
            #expect(try await held.text == #"{"invoice":"lni1first"}"#)
            let second = TestPhone(nds: nds, platform: .ios, token: "7365636f6e642d70686f6e65")
            async let retried = client.post("/api/v1/notify?platform=ios&token=7365636f6e642d70686f6e65", json: Self.invoiceRequest)
            let secondURL = try #require(try await second.pushes(after: 0).first?.replyURL)
            _ = try await client.post(String(secondURL.dropFirst("http://nds.test".count)), json: #"{"invoice":"lni1second"}"#)
            #expect(try await retried.text == #"{"invoice":"lni1second"}"#)
        }
    }
}
