import Foundation
import GRDB
import HeraldStore
import HeraldWire
import Logging
import NIOCore
import ServiceLifecycle

/// The embedded store: one SQLite file in WAL mode, written by one process.
///
/// Writes come in batches (the server's intake groups many webhooks into one transaction), so
/// `synchronous = FULL` costs one fsync per batch, not per event.
///
/// WAL checkpoints are taken off the commit path: SQLite's automatic checkpoint runs inside the
/// commit that crosses the threshold and stalls every webhook waiting on that batch for
/// milliseconds (measured: the cause of the p99 at 1,000 events/s). ``checkpoint()`` runs them
/// on a connection of their own instead; the server calls it periodically.
///
/// A passive checkpoint alone never lets the WAL start over while writes keep coming (frames
/// arrive behind it), so under sustained load the file grew without bound, and the commit that
/// finally restarted it truncated hundreds of megabytes (one 240 ms `ftruncate`, measured after
/// a 115,000-event burst). Past ``walRestartPages`` the writer therefore finishes the checkpoint
/// itself, and the WAL never grows much past that size.
///
/// The use cases are in `SQLiteStore+X.swift`, one file per `PostgresStore+X.swift` with the
/// same use cases. PostgreSQL's `+Notifications`, `+TargetRates` and `+WakeClaims` have none
/// here: they are what several processes share (``SharedStoreCapabilities``), and this store
/// has one process. Only this one has a WAL checkpointer (``StoreCheckpointer``) and a token
/// cache (``TokenResolutionCache``), which its single writer makes safe.
public final class SQLiteStore: Sendable {
    let database: AsyncDatabase
    /// Only for checkpoints, so they never wait behind (or hold up) the writer.
    private let checkpointer: AsyncDatabase
    /// In front of the webhook's token lookup; cleared by every commit that writes `device` or
    /// `dead_token`.
    let tokenCache = TokenResolutionCache()
    /// Tokens that may be dead, so that a raw token not among them needs no read.
    let deadTokens: DeadTokenFilter
    /// The WAL length, in pages, from which ``checkpoint()`` restarts the WAL.
    public let walRestartPages: Int
    /// Send outcomes waiting to ride on the writer's next transaction; nil to write each batch
    /// at once.
    let heldOutcomes: HeldOutcomes?

    /// Opens (creating if needed) the database file and migrates it.
    ///
    /// - Parameters:
    ///   - walRestartPages: From this many WAL pages (4 KiB each) on, a checkpoint also
    ///     restarts the WAL, taking the writer for a moment. The default is 16 MiB.
    ///   - outcomeLinger: How long send outcomes wait for the next intake or claim to carry
    ///     them before they are committed alone (``HeldOutcomes``); zero commits each at once.
    public init(path: String, walRestartPages: Int = 4_096, outcomeLinger: Duration = .milliseconds(20)) throws {
        self.walRestartPages = walRestartPages
        var config = Configuration()
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            // Give the space back after a WAL that readers kept from restarting. Well above the
            // restart size: the commit that truncates pays for every megabyte it frees.
            try db.execute(sql: "PRAGMA journal_size_limit = \(64 << 20)")
        }
        // The database holds bearer tokens (shared provider tokens) and secret hashes: created
        // owner-only, which SQLite passes on to its WAL and shared-memory files.
        if path != ":memory:" { try OwnerOnlyFile.create(atPath: path) }
        // Opening and migrating run once, before the server takes requests: synchronous is fine.
        let pool = try DatabasePool(path: path, configuration: config)
        try Schema.migrator.migrate(pool)
        let deadTokens = DeadTokenFilter()
        try pool.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT platform, token FROM dead_token")
            while let row = try rows.next() {
                guard let platform = Platform(rawValue: row[0]) else { continue }
                deadTokens.insert(platform: platform, token: row[1])
            }
        }
        self.deadTokens = deadTokens
        pool.add(transactionObserver: TokenResolutionCache.Invalidator(tokenCache), extent: .databaseLifetime)
        let writer = DatabaseThread()
        database = AsyncDatabase(pool, threads: (writer: writer, reader: DatabaseThread()))
        heldOutcomes = HeldOutcomes(linger: outcomeLinger, loop: writer.loop)
        checkpointer = AsyncDatabase(try DatabaseQueue(path: path, configuration: config))
    }

    /// Opens the store from async code: opening and migrating are synchronous SQLite work, run
    /// on a dispatch queue so no cooperative thread waits on the file.
    public static func open(
        path: String, walRestartPages: Int = 4_096, outcomeLinger: Duration = .milliseconds(20)
    ) async throws -> SQLiteStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try SQLiteStore(path: path, walRestartPages: walRestartPages, outcomeLinger: outcomeLinger)
                    })
            }
        }
    }

    /// Copies committed WAL pages into the database file without blocking writers or readers
    /// (a passive checkpoint). Once the WAL is ``walRestartPages`` long, the writer then copies
    /// the few frames committed meanwhile, between two of its transactions, so the WAL is fully
    /// copied and its next commit writes the WAL from the beginning.
    ///
    /// A passive checkpoint never waits: when another connection holds the checkpoint lock, or
    /// the writer is rewriting the WAL index header at that instant, SQLite answers
    /// `SQLITE_BUSY` at once, whatever the busy timeout. That is no failure, only a checkpoint
    /// to take next time, so it is reported as `busy` rather than thrown (it made a store test
    /// fail now and then).
    ///
    /// - Returns: The WAL's size in pages, how many of them are now in the database file, and
    ///   whether SQLite was too busy to checkpoint this time.
    @discardableResult
    public func checkpoint() async throws -> CheckpointResult {
        guard var result = try await Self.passiveCheckpoint(on: checkpointer) else {
            return CheckpointResult(walPages: 0, checkpointed: 0, busy: true)
        }
        if result.walPages >= walRestartPages {
            // On the writer's queue nobody appends while it copies, and it never waits: a
            // RESTART from another connection would have to catch the writer between two
            // transactions, and under sustained load it seldom did (seen in the tests).
            guard let restarted = try await Self.passiveCheckpoint(on: database) else {
                result.busy = true
                return result
            }
            result = restarted
        }
        return result
    }

    /// A passive checkpoint, or nil when SQLite found the database busy.
    private static func passiveCheckpoint(on database: AsyncDatabase) async throws -> CheckpointResult? {
        do {
            return try await database.writeWithoutTransaction { db in
                let result = try db.checkpoint(.passive)
                return CheckpointResult(
                    walPages: result.walFrameCount, checkpointed: result.checkpointedFrameCount, busy: false
                )
            }
        } catch let error as StoreError where error.isBusy {
            return nil
        }
    }

    /// The file's path, for logs.
    public var path: String { database.path }

    /// The event loop of the writer's thread, where the outbox's sends start while it is idle
    /// (``senderExecutor``): give it to the push client as a local loop, so that those sends'
    /// connection lives there too and a send costs no other thread's wake-up.
    public var sendingLoop: (any EventLoop)? { database.writerLoop }

    /// Runs a trivial query: the health check.
    public func ping() async throws {
        _ = try await database.unsafeRead { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }
}

extension SQLiteStore: HeraldStoreBackend {
    public var location: String { path }
    /// One `serve` per file (``DatabaseProcessLock``): the leases found at start are its own.
    public var sharing: StoreSharing { .singleProcess }

    /// The WAL checkpointer, off the commit path.
    public func services(logger: Logger) -> [any Service] {
        [StoreCheckpointer(store: self, interval: .seconds(1), logger: logger)]
    }
}

/// What one ``SQLiteStore/checkpoint()`` did.
public struct CheckpointResult: Sendable, Equatable {
    /// The WAL's length in pages (0 when busy before it could be read).
    public var walPages: Int
    /// Pages of it now copied into the database file.
    public var checkpointed: Int
    /// SQLite was busy (another checkpoint, or the writer mid-update): nothing done, try later.
    public var busy: Bool
}
