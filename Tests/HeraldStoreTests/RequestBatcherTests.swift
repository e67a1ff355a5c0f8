import Synchronization
import Testing

@testable import HeraldPostgres

/// PostgreSQL's dead-token checks of concurrent webhooks share one query: every caller must get
/// its own key's answer, a failed query must fail only its batch, and the turn must always pass
/// on so nobody waits for good.
@Suite("Request batcher")
struct RequestBatcherTests {
    @Test("callers that arrive while a query runs share the next one, each with its own answer")
    func batches() async throws {
        let batcher = RequestBatcher<Int, String>(limit: 16, absent: "absent")
        let batches = Shared<[[Int]]>([])
        let answers = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for key in 0..<200 {
                group.addTask {
                    let answer = try await batcher.answer(key) { keys in
                        batches.withLock { $0.append(keys) }
                        // A round trip's time, so that others arrive meanwhile.
                        try await Task.sleep(for: .milliseconds(5))
                        return Dictionary(uniqueKeysWithValues: keys.filter { $0 % 2 == 0 }.map { ($0, "even \($0)") })
                    }
                    return (key, answer)
                }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { key, answer in answer == (key % 2 == 0 ? "even \(key)" : "absent") })
        let sizes = batches.withLock { $0.map(\.count) }
        #expect(sizes.reduce(0, +) == 200, "every key asked exactly once")
        #expect(sizes.allSatisfy { $0 <= 16 }, "no batch over the limit: \(sizes)")
        #expect(sizes.count < 100, "\(sizes.count) queries for 200 callers")
    }

    @Test("a failed query fails its own batch only, and the next callers still get their turn")
    func failures() async throws {
        let batcher = RequestBatcher<Int, Bool>(absent: false)
        let queries = Shared(0)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for key in 0..<100 {
                group.addTask {
                    do {
                        _ = try await batcher.answer(key) { keys in
                            try await Task.sleep(for: .milliseconds(2))
                            if queries.withLock({ count in
                                count += 1
                                return count
                            }) == 1 {
                                throw CancellationError()
                            }
                            return [:]
                        }
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.count == 100)
        #expect(outcomes.contains(false) && outcomes.contains(true), "one batch failed, the rest were answered")
        // Idle again: a lone caller queries at once.
        #expect(try await batcher.answer(7) { keys in [keys[0]: true] })
    }
}

/// A value several tasks change, behind a lock.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
