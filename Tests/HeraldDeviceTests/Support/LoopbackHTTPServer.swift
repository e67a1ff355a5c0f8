import Foundation
import HeraldWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request the loopback server received.
struct RecordedRequest: Sendable {
    var method: String
    var path: String
    /// Header names lower-cased.
    var headers: [String: String]
    var body: Data

    var json: JSONValue? { try? WireJSON.decode(JSONValue.self, from: body) }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// What the server answers and what it saw.
actor LoopbackState {
    private(set) var requests: [RecordedRequest] = []
    /// Statuses for the next requests in order; 200 once used up.
    var script: [Int]
    var delay: Duration

    init(script: [Int], delay: Duration) {
        self.script = script
        self.delay = delay
    }

    func record(_ request: RecordedRequest) -> (status: Int, delay: Duration) {
        requests.append(request)
        let status = script.isEmpty ? 200 : script.removeFirst()
        return (status, delay)
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 over POSIX sockets: enough to receive reply POSTs.
/// Non-blocking and polled, so it never parks a thread of the cooperative pool.
struct LoopbackHTTPServer: Sendable {
    let listener: Int32
    let port: UInt16
    let state: LoopbackState

    var baseURL: String { "http://127.0.0.1:\(port)" }
    func url(_ path: String) -> String { baseURL + path }
    var requests: [RecordedRequest] { get async { await state.requests } }

    /// Runs `body` with a server that answers `statuses` in order (then 200), each after `delay`.
    static func with<T: Sendable>(
        statuses: [Int] = [], delay: Duration = .zero, _ body: @Sendable (LoopbackHTTPServer) async throws -> T
    ) async throws -> T {
        let server = try LoopbackHTTPServer(state: LoopbackState(script: statuses, delay: delay))
        defer { close(server.listener) }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await server.serve()
                return nil
            }
            let result = try await body(server)
            group.cancelAll()
            return result
        }
    }

    init(state: LoopbackState) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.listener = fd
        self.port = UInt16(bigEndian: address.sin_port)
        self.state = state
    }

    func serve() async {
        await withTaskGroup(of: Void.self) { group in
            while !Task.isCancelled {
                let connection = accept(listener, nil, nil)
                if connection >= 0 {
                    _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
                    group.addTask { await self.handle(connection) }
                    continue
                }
                try? await Task.sleep(for: .milliseconds(2))
            }
            group.cancelAll()
        }
    }

    func handle(_ fd: Int32) async {
        defer { close(fd) }
        var buffer: [UInt8] = []
        var headerEnd: Int?
        var expected = 0
        var sentContinue = false
        var chunk = [UInt8](repeating: 0, count: 4096)
        var idle = 0
        while idle < 2500 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                idle = 0
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                return
            } else {
                idle += 1
                if Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(2))
            }
            if headerEnd == nil, let end = Self.find([13, 10, 13, 10], in: buffer) {
                headerEnd = end + 4
                let head = Self.parseHead(buffer[..<end])
                expected = Int(head.headers["content-length"] ?? "0") ?? 0
                if head.headers["expect"]?.lowercased() == "100-continue", !sentContinue {
                    sentContinue = true
                    Self.write("HTTP/1.1 100 Continue\r\n\r\n", to: fd)
                }
            }
            if let start = headerEnd, buffer.count - start >= expected {
                let head = Self.parseHead(buffer[..<(start - 4)])
                let body = Data(buffer[start..<(start + expected)])
                let request = RecordedRequest(method: head.method, path: head.path, headers: head.headers, body: body)
                let (status, delay) = await state.record(request)
                if delay > .zero { try? await Task.sleep(for: delay) }
                Self.write("HTTP/1.1 \(status) Status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", to: fd)
                return
            }
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }

    static func parseHead(_ bytes: ArraySlice<UInt8>) -> (method: String, path: String, headers: [String: String]) {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (
            requestLine.count > 0 ? String(requestLine[0]) : "", requestLine.count > 1 ? String(requestLine[1]) : "", headers
        )
    }

    static func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
