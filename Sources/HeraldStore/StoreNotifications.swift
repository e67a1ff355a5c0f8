import Foundation

/// Messages between the processes on one database (PostgreSQL's `NOTIFY`/`LISTEN`): how one
/// instance tells the others of state it keeps in memory (presence) as it changes.
public protocol StoreNotifications: Sendable {
    /// Sends `payload` (at most 8000 bytes) to every process listening on `channel`, itself included.
    func publish(channel: String, payload: String) async throws
    /// Calls `received` with every payload on `channel` from the moment it listens until the task
    /// is cancelled; throws when the connection is lost (the caller listens again).
    func listen(channel: String, onListening: @Sendable () -> Void, _ received: @Sendable (String) async -> Void) async throws
}
