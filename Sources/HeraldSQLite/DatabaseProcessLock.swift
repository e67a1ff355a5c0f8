import Foundation
import HeraldStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One `herald serve` per SQLite file. The SQLite store assumes it is alone: it frees every lease
/// at start and caches token lookups, so a second server on the same file would send pushes
/// twice. An advisory `flock` on `<database>.lock`, held for the process's life, refuses the
/// second one; the kernel drops it when the process dies, so a `kill -9` never leaves the file
/// locked. Short-lived tools (`herald keys`) do not take it: SQLite's own locking covers them.
public final class DatabaseProcessLock: Sendable {
    public let path: String
    private let descriptor: Int32

    /// Why the lock was not taken.
    public struct Refused: Error, CustomStringConvertible {
        public var databasePath: String
        public var lockPath: String
        /// The other process, when its pid is readable.
        public var holder: Int32?
        public var reason: String?

        public var description: String {
            if let reason { return "cannot lock \(lockPath): \(reason)" }
            let who = holder.map { "process \($0)" } ?? "another process"
            return "\(who) is already serving \(databasePath) (it holds \(lockPath)). Run one `herald serve` per SQLite file; "
                + "for several instances use PostgreSQL (HERALD_DATABASE=postgres://…)."
        }
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Takes the lock for the database at `databasePath`, or throws ``Refused`` at once.
    public static func acquire(forDatabaseAt databasePath: String) throws(Refused) -> DatabaseProcessLock {
        let lockPath = databasePath + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Refused(databasePath: databasePath, lockPath: lockPath, reason: String(cString: strerror(errno)))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var holder: Int32?
            if code == EWOULDBLOCK, let text = try? String(contentsOfFile: lockPath, encoding: .utf8) {
                holder = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            close(fd)
            throw Refused(
                databasePath: databasePath, lockPath: lockPath, holder: holder,
                reason: code == EWOULDBLOCK ? nil : String(cString: strerror(code))
            )
        }
        // The holder's pid, for the second process's message; the lock itself is the flock.
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
        return DatabaseProcessLock(path: lockPath, descriptor: fd)
    }
}
