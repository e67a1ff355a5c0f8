import Foundation
import GRDB
import HeraldStore
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
                        (n, try await client.post("/api/v1/notify?platform=ios&token=cap-\(n)", json: Self.swap("s\(n)")))
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
            #expect(try await nds.eventually { try await nds.store.counts().delivered == 4 })
            for n in accepted {
                #expect(try await nds.store.localPushes(platform: .ios, token: "cap-\(n)", after: 0, limit: 10).count == 1)
            }
            for n in refused {
                #expect(try await nds.store.localPushes(platform: .ios, token: "cap-\(n)", after: 0, limit: 10).isEmpty)
            }
            #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 4, dead: 0))
        }
    }
}
