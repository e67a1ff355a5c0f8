import GRDB
import HeraldStore
import NIOCore

/// The store's only way into SQLite: every access is `async`, and the SQLite work runs on a
/// thread that is not Swift's cooperative pool: the store's own ``DatabaseThread``s, or GRDB's
/// dispatch queues for a database opened without them.
///
/// Why a type of its own: GRDB's synchronous `read`/`write` overloads are disfavoured, not
/// gone, and the compiler picks them silently whenever a closure's result is not `Sendable`
/// (a `Row`, say); the `await` in front then does nothing. Two such calls on the two threads of
/// a 2-core machine's cooperative pool, waiting for readers held by async reads whose
/// continuations need one of those threads, hung the server for good. This type has no
/// synchronous method and demands `Sendable` results, so that mistake no longer compiles; the
/// synchronous calls it makes itself are in ``Blocking``, reached only on a database thread.
///
/// Every SQLite failure leaves it as a ``StoreError``.
struct AsyncDatabase: Sendable {
    private let writer: any DatabaseWriter
    /// Where writes and reads run; nil to use GRDB's own async access (which a cancelled task
    /// interrupts: the checkpointer relies on that at shutdown).
    private let threads: (writer: DatabaseThread, reader: DatabaseThread)?

    init(_ writer: any DatabaseWriter, threads: (writer: DatabaseThread, reader: DatabaseThread)? = nil) {
        self.writer = writer
        self.threads = threads
    }

    /// A read in a transaction of its own (a consistent snapshot).
    func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let writer = self.writer
        guard let threads else { return try await Self.mapped { try await writer.read(value) } }
        return try await threads.reader.run { try Self.mappedNow { try Blocking.read(writer, value) } }
    }

    /// A read outside any transaction: for single statements where a snapshot buys nothing.
    func unsafeRead<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let writer = self.writer
        guard let threads else { return try await Self.mapped { try await writer.unsafeRead(value) } }
        return try await threads.reader.run { try Self.mappedNow { try Blocking.unsafeRead(writer, value) } }
    }

    /// A write in a transaction, committed when `updates` returns.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let writer = self.writer
        guard let threads else { return try await Self.mapped { try await writer.write(updates) } }
        return try await threads.writer.run { try Self.mappedNow { try Blocking.write(writer, updates) } }
    }

    /// A write that manages its own transactions (or needs none, as a checkpoint).
    func writeWithoutTransaction<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let writer = self.writer
        guard let threads else { return try await Self.mapped { try await writer.writeWithoutTransaction(updates) } }
        return try await threads.writer.run { try Self.mappedNow { try Blocking.writeWithoutTransaction(writer, updates) } }
    }

    /// The thread writes run on, for loops that should run there themselves.
    var writerExecutor: (any TaskExecutor)? { threads?.writer }

    /// The writer's thread while it is idle, the pool under load (``DatabaseThread/whenIdle``).
    var writerWhenIdle: (any TaskExecutor)? { threads?.writer.whenIdle }

    /// The writer's event loop.
    var writerLoop: (any EventLoop)? { threads?.writer.loop }

    private static func mapped<T>(_ access: () async throws -> T) async throws -> T {
        do {
            return try await access()
        } catch let error as DatabaseError {
            throw StoreError(error)
        }
    }

    private static func mappedNow<T>(_ access: () throws -> T) throws -> T {
        do {
            return try access()
        } catch let error as DatabaseError {
            throw StoreError(error)
        }
    }

    /// GRDB's synchronous access, from synchronous functions only, so no `await` can stand in
    /// front of them. Called on a ``DatabaseThread`` alone.
    private enum Blocking {
        static func read<T>(_ writer: any DatabaseWriter, _ value: (Database) throws -> T) throws -> T {
            try writer.read(value)
        }

        static func unsafeRead<T>(_ writer: any DatabaseWriter, _ value: (Database) throws -> T) throws -> T {
            try writer.unsafeRead(value)
        }

        static func write<T>(_ writer: any DatabaseWriter, _ updates: (Database) throws -> T) throws -> T {
            try writer.writeWithoutTransaction { db in try db.inPreparedTransaction(updates) }
        }

        static func writeWithoutTransaction<T>(_ writer: any DatabaseWriter, _ updates: (Database) throws -> T) throws -> T {
            try writer.writeWithoutTransaction(updates)
        }
    }

    /// The file's path, for logs.
    var path: String { writer.path }
}

extension Database {
    /// `updates` in an immediate transaction begun and committed by statements prepared once per
    /// connection. GRDB's `inTransaction` parses `BEGIN` and `COMMIT` anew each time: callgrind put
    /// the two at about 30,000 instructions per transaction, three transactions per webhook.
    /// Transaction observers still see the commit (they hang on SQLite's commit hook).
    func inPreparedTransaction<T>(_ updates: (Database) throws -> T) throws -> T {
        try cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            let value = try updates(self)
            try cachedStatement(sql: "COMMIT TRANSACTION").execute()
            return value
        } catch {
            // SQLite may have rolled back already (a full disk, an interrupt); a failed COMMIT
            // (busy) leaves the transaction open.
            if isInsideTransaction { try? rollback() }
            throw error
        }
    }
}
