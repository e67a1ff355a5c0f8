#if canImport(Darwin)
import Darwin
import Dispatch
import Foundation
import notify

/// App/extension coordination with Darwin notifications, as Phoenix does it: the
/// extension posts `…ping`, a running app answers `…pong`. Both names contain the container's
/// secret, because Darwin notification names are global to the device and any app could
/// otherwise post or observe them. The wallet lock is the same `flock` file as the POSIX coordinator.
public struct DarwinNotifyCoordinator: AppExtensionCoordinator {
    public let secret: String
    let lockPath: String
    public let pingName: String
    public let pongName: String

    /// - Parameters:
    ///   - container: the app group directory shared by the app and the extension.
    ///   - prefix: a reverse-DNS prefix for the names, usually the app group identifier.
    public init(container: URL, prefix: String) throws {
        secret = try POSIXAppExtensionCoordinator.loadOrCreateSecret(in: container)
        lockPath = container.appendingPathComponent(POSIXAppExtensionCoordinator.lockFileName).path
        pingName = "\(prefix).herald.\(secret).ping"
        pongName = "\(prefix).herald.\(secret).pong"
    }

    public func extensionWillHandlePush(pingTimeout: Duration) async -> CoordinationDecision {
        if await appAnswersPing(within: pingTimeout) { return .yieldToApp(reason: "the app answered ping") }
        guard let lock = try? FileLock(path: lockPath) else { return .proceed(.none) }
        guard (try? lock.tryLock()) == true else { return .yieldToApp(reason: "the app holds the wallet lock") }
        return .proceed(ExtensionLease { lock.unlock() })
    }

    func appAnswersPing(within timeout: Duration) async -> Bool {
        let answered = FirstValue<Bool>()
        let queue = DispatchQueue(label: "herald.coordination.pong")
        var token: Int32 = NOTIFY_TOKEN_INVALID
        let status = notify_register_dispatch(pongName, &token, queue) { _ in answered.offer(true) }
        guard status == NOTIFY_STATUS_OK else { return false }
        defer { notify_cancel(token) }
        notify_post(pingName)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { answered.offer(false) }
        return await answered.wait() ?? false
    }
}

/// The app's side of `DarwinNotifyCoordinator`: answers pings while active.
///
/// Registering makes iOS wake a suspended app for each ping, so call `suspend()`
/// when the app enters the background and `resume()` when it returns.
public final class DarwinNotifyAppResponder: @unchecked Sendable {
    // The token is written once in init and only read after; notify_* calls are thread-safe.
    private var token: Int32 = NOTIFY_TOKEN_INVALID
    private let lock: FileLock

    public init(coordinator: DarwinNotifyCoordinator) throws {
        lock = try FileLock(path: coordinator.lockPath)
        let pong = coordinator.pongName
        let status = notify_register_dispatch(coordinator.pingName, &token, DispatchQueue.main) { _ in notify_post(pong) }
        guard status == NOTIFY_STATUS_OK else { throw POSIXFailure(operation: "notify_register_dispatch", code: Int32(status)) }
    }

    deinit {
        notify_cancel(token)
        lock.unlock()
    }

    /// Waits (up to `timeout`) for an extension to release the wallet, then holds it.
    public func acquireWallet(within timeout: Duration = .seconds(30)) async throws -> Bool {
        try await lock.lock(within: timeout, clock: .continuous)
    }

    public func releaseWallet() { lock.unlock() }
    public func suspend() { notify_suspend(token) }
    public func resume() { notify_resume(token) }
}
#endif
