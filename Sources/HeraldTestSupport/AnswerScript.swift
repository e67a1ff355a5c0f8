/// Answers a test has scripted for a mock, per device token: a queue used up one request at a
/// time ("503 twice, then the normal answer"), or one answer for every request.
public actor AnswerScript<Answer: Sendable> {
    private var queued: [String: [Answer]] = [:]
    private var fixed: [String: Answer] = [:]

    public init() {}

    /// The next requests for `token` get these answers, in order; after them, the normal answer.
    public func enqueue(_ answers: [Answer], for token: String) {
        queued[token, default: []].append(contentsOf: answers)
    }

    /// Every request for `token` gets `answer` (after any queued ones).
    public func always(_ answer: Answer, for token: String) {
        fixed[token] = answer
    }

    /// Forgets everything scripted for `token`.
    public func clear(_ token: String) {
        queued[token] = nil
        fixed[token] = nil
    }

    /// The scripted answer for the next request to `token`, if any.
    func next(for token: String) -> Answer? {
        if var answers = queued[token], !answers.isEmpty {
            let answer = answers.removeFirst()
            queued[token] = answers
            return answer
        }
        return fixed[token]
    }
}
