import NIOConcurrencyHelpers

/// Lookups that arrive together, answered by one query: while one caller's query is under way,
/// the others wait, and the next of them then asks for all that waited, each key once.
///
/// Why: every webhook to a raw token asked PostgreSQL on its own whether the token is dead, a
/// statement and a round trip each (without that check at all, Herald and PostgreSQL spent a
/// quarter less CPU per webhook under load). Idle, a lookup goes alone at once, as
/// before; under load one statement carries many, as intake's commits do.
///
/// No task of its own: the caller that finds nobody querying queries, and hands the turn to the
/// first caller that waited meanwhile, whose query then carries everyone waiting.
final class RequestBatcher<Key: Hashable & Sendable, Answer: Sendable>: Sendable {
    typealias Query = @Sendable ([Key]) async throws -> [Key: Answer]

    private enum Turn {
        case answered(Answer)
        case query
    }

    private struct Waiting {
        var key: Key
        var continuation: CheckedContinuation<Turn, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var querying = false
    }

    private let state = NIOLockedValueBox(State())
    /// Keys per query at most; the rest wait for the next one.
    let limit: Int
    /// The answer for a key the query did not return.
    let absent: Answer

    init(limit: Int = 1_000, absent: Answer) {
        self.limit = limit
        self.absent = absent
    }

    /// The answer for `key`, from a query that may carry other callers' keys.
    func answer(_ key: Key, query: Query) async throws -> Answer {
        let first = state.withLockedValue { state in
            if state.querying { return false }
            state.querying = true
            return true
        }
        if !first {
            let turn = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Turn, any Error>) in
                let now = state.withLockedValue { state in
                    if state.querying {
                        state.waiting.append(Waiting(key: key, continuation: continuation))
                        return false
                    }
                    state.querying = true
                    return true
                }
                if now { continuation.resume(returning: .query) }
            }
            if case .answered(let answer) = turn { return answer }
        }
        // This caller's turn: its key and those waiting, each key once (a key asked again waits
        // for the next query: an upsert may touch a row once per statement), then the turn goes on.
        let others = state.withLockedValue { state in
            var keys: Set<Key> = [key]
            var taken: [Waiting] = []
            var left: [Waiting] = []
            for waiting in state.waiting {
                if taken.count < limit - 1, keys.insert(waiting.key).inserted {
                    taken.append(waiting)
                } else {
                    left.append(waiting)
                }
            }
            state.waiting = left
            return taken
        }
        let result: Result<[Key: Answer], any Error>
        do {
            result = .success(try await query([key] + others.map(\.key)))
        } catch {
            result = .failure(error)
        }
        let next = state.withLockedValue { state -> Waiting? in
            guard !state.waiting.isEmpty else {
                state.querying = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.continuation.resume(returning: .query)
        switch result {
        case .success(let answers):
            for waiting in others { waiting.continuation.resume(returning: .answered(answers[waiting.key] ?? absent)) }
            return answers[key] ?? absent
        case .failure(let error):
            for waiting in others { waiting.continuation.resume(throwing: error) }
            throw error
        }
    }
}
