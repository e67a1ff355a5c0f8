import Foundation

/// Messages between the processes on one database (PostgreSQL's `NOTIFY`/`LISTEN`): how one
/// instance hears at once of what another did (an answered reply) or tells the others of state it
/// keeps in memory (presence).
public protocol StoreNotifications: Sendable {
    /// Sends `payload` (at most 8000 bytes) to every process listening on `channel`, itself included.
    func publish(channel: String, payload: String) async throws
    /// Calls `received` with every payload on `channel` from the moment it listens until the task
    /// is cancelled; throws when the connection is lost (the caller listens again).
    func listen(channel: String, _ received: @Sendable (String) async -> Void) async throws
}

/// The channels Herald's processes talk on.
public enum StoreChannel {
    /// A reply was answered; the payload is its id. Sent by ``ReplyStore/answerReply(id:answer:now:)``
    /// in the answer's own transaction, so it is heard only once the answer is committed.
    public static let answeredReplies = "herald_reply_answered"
    /// A presence change, as JSON.
    public static let presence = "herald_presence"
}
