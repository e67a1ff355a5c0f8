import HeraldStore
import Logging

extension StoreNotifications {
    /// Listens on `channel` until the task is cancelled, listening again a second after the
    /// connection is lost. What is sent meanwhile is missed: callers have a fallback (the reply
    /// relay's poll, presence renewals).
    func listenUntilCancelled(
        channel: String, clock: any Clock<Duration>, logger: Logger, _ received: @escaping @Sendable (String) async -> Void
    ) async {
        while !Task.isCancelled {
            do {
                logger.debug("listening", metadata: ["channel": "\(channel)"])
                try await listen(channel: channel, received)
            } catch {
                if Task.isCancelled { return }
                logger.warning("lost a notification channel; listening again", metadata: ["channel": "\(channel)", "error": "\(error)"])
            }
            try? await clock.sleep(for: .seconds(1))
        }
    }
}
