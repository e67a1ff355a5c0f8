/// Keeps the app and its extension from driving the wallet at once: a wallet's node state takes
/// one writer at a time.
///
/// Before touching the wallet the extension asks; when the main app is running it yields
/// (the app handles the push itself), otherwise it gets a lease that keeps the app off the
/// wallet until released.
public protocol AppExtensionCoordinator: Sendable {
    /// Extension side: yield to a running app, or proceed holding a lease.
    func extensionWillHandlePush(pingTimeout: Duration) async -> CoordinationDecision
}

/// The extension's answer from the coordinator.
public enum CoordinationDecision: Sendable {
    /// The app is running and owns the wallet.
    case yieldToApp(reason: String)
    /// The extension may use the wallet; release the lease when done.
    case proceed(ExtensionLease)
}

/// The extension's hold on the wallet; the app waits while it is held.
public struct ExtensionLease: Sendable {
    let onRelease: @Sendable () -> Void
    public init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
    public func release() { onRelease() }
    /// A lease that holds nothing, for a coordinator that could not take one.
    public static let none = ExtensionLease {}
}
