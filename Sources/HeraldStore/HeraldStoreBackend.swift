import Foundation

/// Everything the server keeps, on one database: what `buildApplication` and the command line
/// take, so SQLite (``SQLiteStore``) and PostgreSQL stand behind the same routes and services.
public protocol HeraldStoreBackend:
    OutboxStore, DeadLetterStore, TokenStore, DeviceStore, DeviceLookupStore, LocalPushStore, APIKeyStore, SessionStore,
    ReplyStore, LightningAddressStore, ProviderTokenStore, LSPS5Store
{
    /// Runs a trivial query: the health check.
    func ping() async throws
    /// Where the data lives, for logs: a path, or a URL without its password.
    var location: String { get }
}

extension SQLiteStore: HeraldStoreBackend {
    public var location: String { path }
}
