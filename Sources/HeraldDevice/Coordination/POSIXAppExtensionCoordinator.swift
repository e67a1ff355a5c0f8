import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// App/extension coordination with POSIX pieces in the shared container (Linux, Android, and any
/// Apple platform where the app group directory is shared):
///
/// - a `flock` lock file: whoever holds it owns the wallet;
/// - a Unix-domain socket on which the running app answers `ping <secret>` with `pong`.
///
/// The socket's name contains a random secret kept in the container (created owner-only), and a
/// ping must carry it: another app that guesses the directory cannot wake or impersonate ours.
public struct POSIXAppExtensionCoordinator: AppExtensionCoordinator {
    public let container: URL
    /// The secret id shared by the app and the extension.
    public let secret: String
    /// The ping/pong socket; always contains `secret`.
    public let channelPath: String
    /// The wallet lock file.
    public let lockPath: String
    let clock: DeviceClock
    /// The wallet lock as this process holds it: pushes handled side by side share one hold.
    let held = SharedWalletLock()

    public static let secretFileName = "herald-coordination.secret"
    public static let lockFileName = "herald-wallet.lock"
    static let ping = "ping"
    static let pong = "pong"

    /// Coordination in `container`, the socket there too unless `socketDirectory` is given
    /// (Unix socket paths are limited to about 100 bytes).
    public init(container: URL, socketDirectory: URL? = nil, clock: DeviceClock = .continuous) throws {
        let secret = try Self.loadOrCreateSecret(in: container)
        let channel = (socketDirectory ?? container).appendingPathComponent("herald-\(secret).sock").path
        try self.init(container: container, channelPath: channel, clock: clock)
    }

    /// Coordination on an explicit channel path, which must contain the container's secret.
    public init(container: URL, channelPath: String, clock: DeviceClock = .continuous) throws {
        let secret = try Self.loadOrCreateSecret(in: container)
        guard channelPath.contains(secret) else { throw CoordinationError.channelWithoutSecret(channelPath) }
        self.container = container
        self.secret = secret
        self.channelPath = channelPath
        self.lockPath = container.appendingPathComponent(Self.lockFileName).path
        self.clock = clock
    }

    // MARK: Extension side

    public func extensionWillHandlePush(pingTimeout: Duration) async -> CoordinationDecision {
        if await appAnswersPing(within: pingTimeout) {
            return .yieldToApp(reason: "the app answered ping")
        }
        do {
            guard let lease = try held.acquire(lockPath) else { return .yieldToApp(reason: "the app holds the wallet lock") }
            return .proceed(lease)
        } catch {
            // Coordination is a courtesy: a broken container must not cost the user the push.
            return .proceed(.none)
        }
    }

    /// Whether a running app answers a ping on the secret channel within `timeout`.
    public func appAnswersPing(within timeout: Duration) async -> Bool {
        guard let fd = try? UnixSocket.connect(to: channelPath) else { return false }
        defer { close(fd) }
        guard UnixSocket.write("\(Self.ping) \(secret)\n", to: fd) else { return false }
        return await UnixSocket.readLine(from: fd, within: timeout, clock: clock) == Self.pong
    }

    // MARK: App side

    /// Runs while the app is in the foreground: waits for an extension to finish with the wallet,
    /// then holds the wallet lock and answers pings until the calling task is cancelled (cancel it
    /// when the app goes to the background, as Phoenix suspends its channel).
    ///
    /// - Parameters:
    ///   - waitingForExtension: called once if an extension holds the wallet when the app arrives.
    ///   - ready: called when the app owns the wallet and answers pings.
    public func runAppPresence(
        waitingForExtension: @Sendable () -> Void = {},
        ready: @Sendable () -> Void = {}
    ) async throws {
        let lock = try FileLock(path: lockPath)
        if try !lock.tryLock() {
            waitingForExtension()
            while try await !lock.lock(within: .seconds(3600), clock: clock) {}
        }
        defer { lock.unlock() }
        let listener = try UnixSocket.listen(at: channelPath)
        defer {
            close(listener)
            unlink(channelPath)
        }
        ready()
        while !Task.isCancelled {
            if let connection = UnixSocket.accept(from: listener) {
                await answer(connection)
                continue
            }
            do { try await clock.sleep(UnixSocket.pollInterval) } catch { break }
        }
    }

    func answer(_ connection: Int32) async {
        defer { close(connection) }
        let line = await UnixSocket.readLine(from: connection, within: .milliseconds(200), clock: clock)
        // A ping without the secret gets no answer at all.
        guard line == "\(Self.ping) \(secret)" else { return }
        UnixSocket.write("\(Self.pong)\n", to: connection)
    }

    // MARK: The secret

    /// Reads the container's secret, creating it (owner-only, 128 random bits) on first use.
    static func loadOrCreateSecret(in container: URL) throws -> String {
        let path = container.appendingPathComponent(secretFileName).path
        if let existing = readSecret(at: path) { return existing }
        let secret = randomHex(bytes: 16)
        // Written beside and linked into place: the app and the extension may race to create it,
        // and link() never replaces, so both end up with the winner's secret.
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXFailure(operation: "open \(temporary)", code: errno) }
        let bytes = Array(secret.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(temporary) }
        guard written == bytes.count else { throw POSIXFailure(operation: "write \(temporary)", code: errno) }
        if link(temporary, path) != 0, errno != EEXIST { throw POSIXFailure(operation: "link \(path)", code: errno) }
        guard let stored = readSecret(at: path) else { throw CoordinationError.unreadableSecret(path) }
        return stored
    }

    static func readSecret(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.count >= 32 ? text : nil
    }
}

/// Why coordination could not be set up.
public enum CoordinationError: Error, Sendable, Hashable {
    /// A channel name must contain the container's secret id.
    case channelWithoutSecret(String)
    case unreadableSecret(String)
}

/// The wallet lock shared by the pushes one process handles at once: the first takes the file
/// lock, the others join its hold, and the last to finish lets go. (A second `flock` from the
/// same process would fail, and a push handled beside another would yield as if to the app.)
final class SharedWalletLock: @unchecked Sendable {
    // Guards `holders` and `lock`; held only for a non-blocking `tryLock` or a count.
    private let mutex = NSLock()
    private var holders = 0
    private var lock: FileLock?

    /// A lease on the wallet, or nil when another process (the app) holds the lock.
    func acquire(_ path: String) throws -> ExtensionLease? {
        mutex.lock()
        defer { mutex.unlock() }
        if holders == 0 {
            let file = try FileLock(path: path)
            guard try file.tryLock() else { return nil }
            lock = file
        }
        holders += 1
        return ExtensionLease { [self] in release() }
    }

    private func release() {
        mutex.lock()
        defer { mutex.unlock() }
        holders -= 1
        if holders == 0 {
            lock?.unlock()
            lock = nil
        }
    }
}
