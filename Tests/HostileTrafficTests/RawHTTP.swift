import Foundation
import NIOCore
import NIOPosix

/// An HTTP/1.1 client that sends whatever bytes it is given (valid or not) and reports what
/// came back: the status of each response, whether the server closed the connection, and
/// whether it did neither within the timeout.
enum RawHTTP {
    struct Request: Sendable {
        var bytes: [UInt8]
        /// Responses to wait for (more than one when requests are pipelined).
        var responses: Int = 1

        static func get(_ path: String, headers: [String] = []) -> Request {
            Request(bytes: Array(head("GET", path, headers: headers).utf8))
        }

        static func post(_ path: String, body: [UInt8], headers: [String] = ["Content-Type: application/json"]) -> Request {
            method("POST", path, body: body, headers: headers)
        }

        static func method(_ method: String, _ path: String, body: [UInt8], headers: [String] = []) -> Request {
            Request(bytes: Array(head(method, path, headers: headers + ["Content-Length: \(body.count)"]).utf8) + body)
        }

        static func head(_ method: String, _ path: String, headers: [String]) -> String {
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        }
    }

    struct Exchange: Sendable {
        var statuses: [Int] = []
        var bodies: [String] = []
        var refused = false
        var closedByServer = false
        var timedOut = false
        var elapsed: Duration = .zero
    }

    /// Connects, writes `request`, and reads until the expected responses arrived, the server
    /// closed, or `timeout` passed (then the connection is closed from here).
    static func exchange(port: Int, request: Request, timeout: Duration) async -> Exchange {
        let start = ContinuousClock.now
        guard let connection = try? await RawConnection.open(port: port) else {
            return Exchange(refused: true, elapsed: ContinuousClock.now - start)
        }
        defer { connection.close() }
        try? await connection.write(request.bytes)
        var exchange = await connection.read(responses: request.responses, isHead: request.isHead, timeout: timeout)
        exchange.elapsed = ContinuousClock.now - start
        return exchange
    }
}

extension RawHTTP.Request {
    /// A HEAD request's answer has no body, whatever its Content-Length says.
    var isHead: Bool { bytes.starts(with: Array("HEAD ".utf8)) }
}

/// One client connection, driven step by step: for tests of what the server does between
/// requests (idle connections, trickled heads, connection caps).
final class RawConnection {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private(set) var received: [UInt8] = []
    private(set) var closedByServer = false

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
        iterator = channel.inbound.makeAsyncIterator()
    }

    static func open(port: Int) async throws -> RawConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(2))
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return RawConnection(channel: channel)
    }

    /// Queues `bytes` without waiting for them to go out: a server that stops reading must
    /// not hang the test.
    func write(_ bytes: [UInt8]) async throws {
        channel.channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// Reads until `responses` whole responses have arrived in all (nil: until the server
    /// closes), or `timeout` passes; then the connection is closed from here.
    func read(responses: Int?, isHead: Bool = false, timeout: Duration) async -> RawHTTP.Exchange {
        var exchange = RawHTTP.Exchange()
        let raw = channel.channel
        let timer = Task {
            try await Task.sleep(for: timeout)
            raw.close(promise: nil)
            return true
        }
        func update() -> Bool {
            let parsed = ResponseParser.parse(received, firstIsHead: isHead)
            exchange.statuses = parsed.statuses
            exchange.bodies = parsed.bodies
            if let responses { return parsed.statuses.count >= responses }
            return false
        }
        if !update() {
            do {
                while let chunk = try await iterator.next() {
                    received += chunk.readableBytesView
                    if update() { break }
                }
                if !update() { closedByServer = true }
            } catch {
                closedByServer = true
            }
        }
        timer.cancel()
        if (try? await timer.value) == true {
            exchange.timedOut = true
            closedByServer = false
        }
        exchange.closedByServer = closedByServer
        return exchange
    }

    func close() {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }

    deinit { close() }

    /// A handle other tasks can write with while this connection reads.
    var writer: Writer { Writer(channel: channel.channel) }

    struct Writer: Sendable {
        let channel: any Channel
        func write(_ bytes: [UInt8]) { channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil) }

        /// Writes `bytes` one at a time, one every 100 ms, until done or cancelled.
        func trickle(_ bytes: [UInt8]) -> Task<Void, any Error> {
            Task {
                for byte in bytes {
                    write([byte])
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
    }
}

/// Splits response bytes into complete responses (Content-Length or chunked bodies).
enum ResponseParser {
    static func parse(_ bytes: [UInt8], firstIsHead: Bool = false) -> (statuses: [Int], bodies: [String]) {
        var statuses: [Int] = []
        var bodies: [String] = []
        var index = 0
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while index < bytes.count {
            guard let headEnd = find(separator, in: bytes, from: index) else { break }
            let head = String(decoding: bytes[index..<headEnd], as: UTF8.self)
            let lines = head.split(separator: "\r\n")
            guard let statusLine = lines.first else { break }
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { break }
            var length = 0
            var chunked = false
            for line in lines.dropFirst() {
                let lower = line.lowercased()
                if lower.hasPrefix("content-length:") {
                    length = Int(lower.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                } else if lower.hasPrefix("transfer-encoding:") && lower.contains("chunked") {
                    chunked = true
                }
            }
            var bodyStart = headEnd + separator.count
            if statuses.isEmpty && firstIsHead {
                statuses.append(status)
                bodies.append("")
                index = bodyStart
            } else if chunked {
                var body: [UInt8] = []
                while true {
                    guard let lineEnd = find(Array("\r\n".utf8), in: bytes, from: bodyStart) else { return (statuses, bodies) }
                    let sizeText = String(decoding: bytes[bodyStart..<lineEnd], as: UTF8.self)
                    guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { return (statuses, bodies) }
                    let dataStart = lineEnd + 2
                    guard dataStart + size + 2 <= bytes.count else { return (statuses, bodies) }
                    body += bytes[dataStart..<dataStart + size]
                    bodyStart = dataStart + size + 2
                    if size == 0 { break }
                }
                statuses.append(status)
                bodies.append(String(decoding: body, as: UTF8.self))
                index = bodyStart
            } else {
                guard bodyStart + length <= bytes.count else { break }
                statuses.append(status)
                bodies.append(String(decoding: bytes[bodyStart..<bodyStart + length], as: UTF8.self))
                index = bodyStart + length
            }
        }
        return (statuses, bodies)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle { return i }
            i += 1
        }
        return nil
    }
}
