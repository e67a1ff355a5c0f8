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

/// The few Unix-domain stream socket calls the POSIX coordinator needs, non-blocking and polled
/// so no thread of the cooperative pool is ever parked in a system call.
enum UnixSocket {
    #if canImport(Darwin)
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #else
    static let streamType = Int32(SOCK_STREAM.rawValue)
    // A peer that went away must not kill the process with SIGPIPE.
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    /// How often a non-blocking socket is looked at again.
    static let pollInterval: Duration = .milliseconds(5)

    static func address(_ path: String) throws(POSIXFailure) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw POSIXFailure(operation: "socket path too long: \(path)", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    static func makeSocket() throws(POSIXFailure) -> Int32 {
        let fd = socket(AF_UNIX, streamType, 0)
        guard fd >= 0 else { throw POSIXFailure(operation: "socket", code: errno) }
        return prepared(fd)
    }

    /// `fd` closed on exec, non-blocking, and (on Darwin, which has no `MSG_NOSIGNAL`) never
    /// raising SIGPIPE: what every socket here, made or accepted, needs.
    private static func prepared(_ fd: Int32) -> Int32 {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        #if canImport(Darwin)
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// A listening socket at `path`, owner-only; a stale socket file from a dead process is replaced.
    static func listen(at path: String) throws(POSIXFailure) -> Int32 {
        var address = try address(path)
        let fd = try makeSocket()
        unlink(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw POSIXFailure(operation: "bind \(path)", code: code)
        }
        chmod(path, 0o600)
        guard systemListen(fd, 8) == 0 else {
            let code = errno
            close(fd)
            throw POSIXFailure(operation: "listen \(path)", code: code)
        }
        return fd
    }

    /// A connection to `path`, or `nil` when nobody listens there.
    static func connect(to path: String) throws(POSIXFailure) -> Int32? {
        var address = try address(path)
        let fd = try makeSocket()
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // A Unix socket connects at once or not at all; EAGAIN means the backlog is full.
        if result == 0 { return fd }
        let code = errno
        close(fd)
        if code == ENOENT || code == ECONNREFUSED || code == EAGAIN { return nil }
        throw POSIXFailure(operation: "connect \(path)", code: code)
    }

    /// An accepted connection, or `nil` when none is waiting.
    static func accept(from listener: Int32) -> Int32? {
        let fd = systemAccept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        return prepared(fd)
    }

    /// Reads up to a newline (at most 256 bytes) within `timeout`; `nil` on timeout, close or error.
    static func readLine(from fd: Int32, within timeout: Duration, clock: DeviceClock) async -> String? {
        let deadline = Deadline(clock: clock, after: timeout)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while bytes.count < 256 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes.append(contentsOf: buffer[0..<count])
                if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                    return String(decoding: bytes[..<newline], as: UTF8.self)
                }
                continue
            }
            if count == 0 { return nil }
            guard errno == EAGAIN || errno == EWOULDBLOCK, deadline.remaining > .zero else { return nil }
            do { try await clock.sleep(min(pollInterval, deadline.remaining)) } catch { return nil }
        }
        return nil
    }

    /// Writes a short message; `false` if it could not be sent whole.
    @discardableResult
    static func write(_ text: String, to fd: Int32) -> Bool {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, sendFlags) }
        return sent == bytes.count
    }
}

// The system calls whose names the methods above shadow.
@inline(__always) private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
@inline(__always) private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
@inline(__always) private func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?)
    -> Int32
{
    accept(fd, address, length)
}
