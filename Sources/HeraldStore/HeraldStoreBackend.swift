import Foundation
import Logging
import ServiceLifecycle

/// Everything the server keeps, on one database: what `buildApplication` and the command line
/// take, so SQLite (`HeraldSQLite`) and PostgreSQL (`HeraldPostgres`) stand behind the same
/// routes and services.
public protocol HeraldStoreBackend:
    OutboxStore, DeadLetterStore, TokenStore, DeviceStore, DeviceLookupStore, LocalPushStore, APIKeyStore, SessionStore,
    ReplyStore, LightningAddressStore, ProviderTokenStore, LSPS5Store, ZapStore, IdentityStore, DeviceChallengeStore, WakeLedgerStore,
    NwcStore, LiveActivityStore, Bip353Store
{
    /// Runs a trivial query: the health check.
    func ping() async throws
    /// Where the data lives, for logs: a path, or a URL without its password.
    var location: String { get }
    /// Whether other processes write the same database, and if so what they agree on through it.
    var sharing: StoreSharing { get }
    /// What must run while the store is used (a connection pool, a WAL checkpointer): started
    /// before and stopped after every service that uses the store.
    func services(logger: Logger) -> [any Service]
}

/// What several `herald serve` processes on one database agree on through it: each device
/// token's push allowance, wake claims, and messages between the processes. A shared back end
/// conforms as a whole, so no part of it can silently fall back to per-process state.
public protocol SharedStoreCapabilities: TargetRateStore, WakeClaimStore, StoreNotifications {}

/// How the database is written: by this process alone (SQLite: one `serve` per file, so the
/// leases found at start are its own, from before a crash), or shared with other processes
/// (PostgreSQL), with the capabilities that sharing needs. Chosen by the back end, read once at
/// the composition root.
public enum StoreSharing: Sendable {
    case singleProcess
    case shared(any SharedStoreCapabilities)

    /// The shared capabilities; nil for a single process.
    public var capabilities: (any SharedStoreCapabilities)? {
        switch self {
        case .singleProcess: nil
        case .shared(let capabilities): capabilities
        }
    }
}
