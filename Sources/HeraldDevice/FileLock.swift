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

/// An advisory `flock` on a file, shared by the app and its extension through the container.
///
/// The lock belongs to the open file, so the kernel drops it when the process dies: a killed
/// extension never leaves the app locked out.
public final class FileLock: Sendable {
    let descriptor: Int32
    public let path: String

    /// Opens (creating, owner-only) the lock file.
    public init(path: String) throws(POSIXFailure) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXFailure(operation: "open \(path)", code: errno) }
        self.descriptor = fd
        self.path = path
    }

    deinit { close(descriptor) }

    /// Takes the lock if free; `false` when another open file holds it.
    public func tryLock() throws(POSIXFailure) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        let code = errno
        if code == EWOULDBLOCK || code == EAGAIN { return false }
        throw POSIXFailure(operation: "flock \(path)", code: code)
    }

    /// Waits for the lock, polling, up to `timeout`; `false` if it stayed taken.
    public func lock(within timeout: Duration, clock: DeviceClock, poll: Duration = .milliseconds(20)) async throws -> Bool {
        let deadline = Deadline(clock: clock, after: timeout)
        while true {
            if try tryLock() { return true }
            guard deadline.remaining > .zero else { return false }
            try await clock.sleep(min(poll, deadline.remaining))
        }
    }

    public func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }
}

/// A failed system call, with its `errno`.
public struct POSIXFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var code: Int32
    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
