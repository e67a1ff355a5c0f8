import GRDB
import HeraldStore

extension StoreError {
    /// SQLite's failure; busy when another connection held the file past the busy timeout.
    init(_ underlying: DatabaseError) {
        self.init(
            backendFailure: underlying, description: "\(underlying)",
            isBusy: underlying.resultCode == .SQLITE_BUSY || underlying.resultCode == .SQLITE_LOCKED
        )
    }
}
