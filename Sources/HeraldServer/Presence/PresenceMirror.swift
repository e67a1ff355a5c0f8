import Foundation
import HeraldStore
import HeraldWire
import Logging
import ServiceLifecycle

/// Keeps the presence registries of every instance on a shared database the same: sends this
/// instance's changes to the others, in order, and applies theirs as they arrive.
///
/// A change lost while the channel reconnects is not replayed: heartbeats and held streams are
/// renewed by their clients and holders within a keep-alive interval, and a missed wake record
/// only makes a hint less precise. What must hold exactly across instances, the claim to push a
/// wake, lives in the database instead (``WakeClaimStore``).
final class PresenceMirror: Service, Sendable {
    let registry: PresenceRegistry
    let store: any StoreNotifications
    let now: @Sendable () -> Date
    let clock: any Clock<Duration>
    let logger: Logger

    init(
        registry: PresenceRegistry, store: any StoreNotifications, now: @escaping @Sendable () -> Date,
        clock: any Clock<Duration>, logger: Logger
    ) {
        self.registry = registry
        self.store = store
        self.now = now
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.send() }
                group.addTask { await self.receive() }
                await group.next()
                group.cancelAll()
            }
        }
    }

    private func send() async {
        for await change in registry.changes {
            do {
                try await store.publish(channel: StoreChannel.presence, payload: try WireJSON.encodeString(change))
            } catch {
                if Task.isCancelled { return }
                logger.warning("could not tell other instances of a presence change", metadata: ["error": "\(error)"])
            }
        }
    }

    private func receive() async {
        let registry = self.registry
        let now = self.now
        let logger = self.logger
        await store.listenUntilCancelled(channel: StoreChannel.presence, clock: clock, logger: logger) { payload in
            guard let change = try? WireJSON.decode(PresenceChange.self, from: Data(payload.utf8)) else {
                logger.warning("ignored an unreadable presence change")
                return
            }
            registry.apply(change, now: now())
        }
    }
}
