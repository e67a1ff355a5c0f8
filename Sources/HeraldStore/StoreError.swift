/// The database failed to do what was asked: an I/O error, a full disk, a damaged file, a lock
/// held past the busy timeout, a lost connection to the server.
///
/// A type of its own so the server can answer every such failure the same way (`503
/// store_unavailable`, the client retries) without knowing which database is behind the store.
public struct StoreError: Error, CustomStringConvertible {
    let underlying: any Error
    /// Another connection held the database: trying again later can succeed.
    public let isBusy: Bool
    private let summary: String?

    /// A failure of another back end, with a description safe to log (no bound values).
    public init(backendFailure underlying: any Error, description: String, isBusy: Bool = false) {
        self.underlying = underlying
        self.isBusy = isBusy
        self.summary = description
    }

    public var description: String { summary ?? "\(underlying)" }
}
