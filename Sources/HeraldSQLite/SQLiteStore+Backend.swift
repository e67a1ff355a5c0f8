import HeraldStore
import Logging
import ServiceLifecycle

extension SQLiteStore: HeraldStoreBackend {
    public var location: String { path }
    /// One `serve` per file (``DatabaseProcessLock``): the leases found at start are its own.
    public var sharing: StoreSharing { .singleProcess }

    /// The WAL checkpointer, off the commit path.
    public func services(logger: Logger) -> [any Service] {
        [StoreCheckpointer(store: self, interval: .seconds(1), logger: logger)]
    }
}
