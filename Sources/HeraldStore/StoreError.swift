import GRDB

/// The database failed to do what was asked: an I/O error, a full disk, a damaged file, a lock
/// held past the busy timeout.
///
/// A type of its own so the server can answer every such failure the same way (`503
/// store_unavailable`, the client retries) without knowing which database is behind the store.
public struct StoreError: Error, CustomStringConvertible {
    let underlying: DatabaseError

    init(_ underlying: DatabaseError) {
        self.underlying = underlying
    }

    /// Another connection held the database: trying again later can succeed.
    public var isBusy: Bool {
        underlying.resultCode == .SQLITE_BUSY || underlying.resultCode == .SQLITE_LOCKED
    }

    public var description: String { "\(underlying)" }
}
