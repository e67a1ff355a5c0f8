import Foundation
import HeraldStore
import PostgresNIO

extension PostgresStore: StoreNotifications {
    public func publish(channel: String, payload: String) async throws {
        try await rows("SELECT pg_notify(\(channel), \(payload))")
    }

    public func listen(channel: String, _ received: @Sendable (String) async -> Void) async throws {
        // One pool connection held while listening: a notification reaches only the session that asked.
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                for try await notification in notifications {
                    await received(notification.payload)
                }
            }
        }
    }
}
