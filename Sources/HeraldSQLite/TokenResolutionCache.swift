import Foundation
import GRDB
import HeraldStore
import HeraldWire

/// What the webhook's `token` parameter resolved to, remembered so that the lookup every
/// webhook makes is a dictionary read instead of two SQLite queries (about 15 µs measured, a
/// twentieth of a webhook's CPU).
///
/// Correct because one process owns the file: ``Invalidator`` clears it after every commit that
/// wrote `device` or `dead_token`, whichever code wrote them. The generation keeps a lookup that
/// read the rows before such a commit from caching its answer after the invalidation.
final class TokenResolutionCache: @unchecked Sendable {
    struct Key: Hashable {
        var token: String
        var rawPlatform: Platform?
    }

    /// A full cache is emptied rather than evicted entry by entry: random tokens sent to fill it
    /// cost their sender one SQLite lookup each after that, and memory stays bounded.
    let capacity: Int
    /// The bound in bytes, as ``cost(of:_:)`` counts them. Entries alone do not bound memory: a
    /// raw token may be 4 KiB, so 100,000 of them would be 400 MB.
    let maxBytes: Int
    // Guarded by `lock`.
    private var entries: [Key: WebhookTokenResolution] = [:]
    private var bytes = 0
    private var generation = 0
    private let lock = NSLock()

    /// Sized for the devices that send often, not for every token ever seen: a cache of
    /// 100,000 entries held 40 MB after a load of fresh raw tokens,
    /// most of Herald's memory, for answers that were never asked for again.
    init(capacity: Int = 8_192, maxBytes: Int = 4 << 20) {
        self.capacity = capacity
        self.maxBytes = maxBytes
    }

    /// An entry's share of memory: the dictionary slot as laid out (key and answer, with room for
    /// the table's free slots), and the strings' bytes outside it.
    static func cost(of key: Key, _ resolution: WebhookTokenResolution) -> Int {
        let device = resolution.device.map { $0.id.utf8.count + $0.token.utf8.count + $0.alias.utf8.count } ?? 0
        return slotBytes + key.token.utf8.count + device
    }

    static let slotBytes = (MemoryLayout<Key>.stride + MemoryLayout<WebhookTokenResolution>.stride) * 4 / 3 + 32

    /// Entries and their bytes now.
    var usage: (count: Int, bytes: Int) { lock.withLock { (entries.count, bytes) } }

    /// The cached answer, or the generation to hand to ``store(_:for:generation:)`` once the
    /// answer has been read from the database.
    func lookup(_ key: Key) -> (WebhookTokenResolution?, generation: Int) {
        lock.withLock { (entries[key], generation) }
    }

    func store(_ resolution: WebhookTokenResolution, for key: Key, generation: Int) {
        lock.withLock {
            guard generation == self.generation else { return }
            let cost = Self.cost(of: key, resolution)
            guard cost <= maxBytes else { return }
            if let previous = entries[key] { bytes -= Self.cost(of: key, previous) }
            if entries.count >= capacity || bytes + cost > maxBytes {
                // Storage and all: kept, it would hold the peak's memory for good.
                entries.removeAll()
                bytes = 0
            }
            entries[key] = resolution
            bytes += cost
        }
    }

    func invalidate() {
        lock.withLock {
            generation &+= 1
            entries.removeAll()
            bytes = 0
        }
    }
}

extension TokenResolutionCache {
    /// Watches the writer's transactions and clears the cache after each commit that touched a
    /// table the answers come from. Lives on the writer's queue, so `touched` needs no lock.
    final class Invalidator: TransactionObserver {
        static let tables: Set<String> = ["device", "dead_token"]
        let cache: TokenResolutionCache
        private var touched = false

        init(_ cache: TokenResolutionCache) {
            self.cache = cache
        }

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
            Self.tables.contains(eventKind.tableName)
        }

        func databaseDidChange(with event: DatabaseEvent) {
            touched = true
            stopObservingDatabaseChangesUntilNextTransaction()
        }

        /// `dead_token` is WITHOUT ROWID, which SQLite reports no events for: its one writer
        /// announces its changes with `notifyChanges(in:)`, and they arrive here.
        func databaseDidChange() {
            touched = true
        }

        func databaseDidCommit(_ db: Database) {
            if touched { cache.invalidate() }
            touched = false
        }

        func databaseDidRollback(_ db: Database) {
            touched = false
        }
    }
}
