import HeraldStore
import Logging
import ServiceLifecycle

/// Keeps the SQLite WAL short by checkpointing it now and then on its own connection, off the
/// commit path (see ``SQLiteStore``).
struct StoreCheckpointer: Service {
    let store: SQLiteStore
    let interval: Duration
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let result = try await store.checkpoint()
                    if result.walPages > 50_000 {
                        // Readers holding old snapshots keep pages in the WAL; worth knowing.
                        logger.notice("the WAL is long", metadata: ["pages": "\(result.walPages)"])
                    }
                } catch {
                    // Shutdown interrupts a checkpoint under way (SQLITE_INTERRUPT): not a failure.
                    if Task.isCancelled { return }
                    logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: interval)
            }
        }
        // One last pass so a clean shutdown leaves a short WAL.
        _ = try? await store.checkpoint()
    }
}
