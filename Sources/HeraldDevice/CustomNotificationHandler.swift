/// An app's handler for a `notification_type` the plugin does not know.
///
/// It gets the same context as the built-in tasks (the wallet, replies with retries, the
/// catalogue, the deadline); a thrown error shows the fallback content.
public protocol CustomNotificationHandler: Sendable {
    func handle(_ push: CustomPush, in context: TaskContext) async throws -> NotificationContent
}

/// A handler from a closure.
public struct ClosureNotificationHandler: CustomNotificationHandler {
    let body: @Sendable (CustomPush, TaskContext) async throws -> NotificationContent
    public init(_ body: @escaping @Sendable (CustomPush, TaskContext) async throws -> NotificationContent) { self.body = body }
    public func handle(_ push: CustomPush, in context: TaskContext) async throws -> NotificationContent {
        try await body(push, context)
    }
}
