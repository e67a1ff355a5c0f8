import HeraldStore
import GRDB

/// The store's only way into SQLite: every access is `async` and runs on GRDB's own dispatch
/// queues, so no cooperative thread ever waits on a reader semaphore or the writer's queue.
///
/// Why a type of its own: GRDB's synchronous `read`/`write` overloads are disfavoured, not
/// gone, and the compiler picks them silently whenever a closure's result is not `Sendable`
/// (a `Row`, say); the `await` in front then does nothing. Two such calls on the two threads of
/// a 2-core machine's cooperative pool, waiting for readers held by async reads whose
/// continuations need one of those threads, hung the server for good. This type has no
/// synchronous method and demands `Sendable` results, so that mistake no longer compiles.
///
/// Every SQLite failure leaves it as a ``StoreError``.
struct AsyncDatabase: Sendable {
    private let writer: any DatabaseWriter

    init(_ writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// A read in a transaction of its own (a consistent snapshot).
    func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.mapped { try await writer.read(value) }
    }

    /// A read outside any transaction: for single statements where a snapshot buys nothing.
    func unsafeRead<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.mapped { try await writer.unsafeRead(value) }
    }

    /// A write in a transaction, committed when `updates` returns.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.mapped { try await writer.write(updates) }
    }

    /// A write that manages its own transactions (or needs none, as a checkpoint).
    func writeWithoutTransaction<T: Sendable>(
        _ updates: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await Self.mapped { try await writer.writeWithoutTransaction(updates) }
    }

    private static func mapped<T>(_ access: () async throws -> T) async throws -> T {
        do {
            return try await access()
        } catch let error as DatabaseError {
            throw StoreError(error)
        }
    }

    /// The file's path, for logs.
    var path: String { writer.path }
}
