import Foundation
import HeraldWire

/// What the webhook's `token` parameter resolved to, remembered so that the lookup every
/// webhook makes is a dictionary read instead of two SQLite queries (about 15 µs measured, a
/// twentieth of a webhook's CPU).
///
/// Correct because one process owns the file: every write that can change an answer (a device
/// registered, rotated or deleted, a token marked dead) calls ``invalidate()`` after it commits.
/// The generation keeps a lookup that read the rows before such a commit from caching its answer
/// after the invalidation.
final class TokenResolutionCache: @unchecked Sendable {
    struct Key: Hashable {
        var token: String
        var rawPlatform: Platform?
    }

    /// A full cache is emptied rather than evicted entry by entry: random tokens sent to fill it
    /// cost their sender one SQLite lookup each after that, and memory stays bounded.
    let capacity: Int
    // Guarded by `lock`.
    private var entries: [Key: WebhookTokenResolution] = [:]
    private var generation = 0
    private let lock = NSLock()

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The cached answer, or the generation to hand to ``store(_:for:generation:)`` once the
    /// answer has been read from the database.
    func lookup(_ key: Key) -> (WebhookTokenResolution?, generation: Int) {
        lock.withLock { (entries[key], generation) }
    }

    func store(_ resolution: WebhookTokenResolution, for key: Key, generation: Int) {
        lock.withLock {
            guard generation == self.generation else { return }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = resolution
        }
    }

    func invalidate() {
        lock.withLock {
            generation &+= 1
            entries.removeAll()
        }
    }
}
