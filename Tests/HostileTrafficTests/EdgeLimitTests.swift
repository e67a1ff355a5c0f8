import Foundation
import HeraldTestSupport
import Testing

/// The HTTP edge's limits, seen from a client socket: every connection ends, and the server
/// keeps answering the connections it holds.
@Suite("HTTP edge limits", .serialized)
struct EdgeLimitTests {
    @Test("a request whose head is over the limit gets 400 and its socket is closed: no descriptor left behind")
    func oversizedHead() async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + ["--idle-timeout", "30"])
        let before = server.openDescriptors
        let huge = Array(RawHTTP.Request.head("GET", "/health", headers: ["X-Big: " + String(repeating: "h", count: 1 << 20)]).utf8)
        let outcomes = Shared<[String]>([])
        await forEach(Array(0..<60), width: 12) { _ in
            guard let connection = try? await RawConnection.open(port: server.port) else {
                outcomes.update { $0.append("refused") }
                return
            }
            try? await connection.write(huge)
            let exchange = await connection.read(responses: nil, timeout: .seconds(10))
            connection.close()
            outcomes.update { $0.append("\(exchange.statuses.first.map(String.init) ?? "none") closed=\(exchange.closedByServer)") }
        }
        // Every connection was closed by the server (the status may be lost when the server
        // resets a socket whose input it never read).
        let results = outcomes.get()
        #expect(results.allSatisfy { $0.hasSuffix("closed=true") }, "\(Dictionary(grouping: results, by: { $0 }).mapValues(\.count))")
        #expect(results.contains { $0.hasPrefix("400") }, "\(results.prefix(5))")
        // The server closes the sockets on its own time: wait for it rather than a fixed while.
        #expect(
            await eventually(timeout: .seconds(10)) { server.openDescriptors <= before + 2 },
            "descriptors: \(before) before, \(server.openDescriptors) after")
        let health = await RawHTTP.exchange(port: server.port, request: .get("/health"), timeout: .seconds(2))
        #expect(health.statuses.first == 200)
    }

    @Test("a malformed chunked body is a 400 on the webhook, device and reply routes, not a 500")
    func malformedChunkedBody() async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let device = try await RegisteredDevice.register(port: server.port, token: "chunked")
        let routes = [
            ("POST", device.webhookPath), ("POST", "/api/v1/devices"), ("PUT", "/api/v1/devices/\(device.id)"),
            ("POST", "/api/v1/reply/" + String(repeating: "c", count: 32)),
        ]
        for (method, path) in routes {
            let head = RawHTTP.Request.head(
                method, path,
                headers: ["Content-Type: application/json", "Authorization: Bearer \(device.secret)", "Transfer-Encoding: chunked"]
            )
            let exchange = await RawHTTP.exchange(
                port: server.port, request: RawHTTP.Request(bytes: Array((head + "-5\r\n{}\r\n0\r\n\r\n").utf8)), timeout: .seconds(5)
            )
            #expect(exchange.statuses == [400], "\(method) \(path): \(exchange)")
            #expect(exchange.bodies.first?.contains("malformed_request") == true, "\(method) \(path)")
        }
    }

    @Test("an idle connection is closed after the idle timeout, before and after a request")
    func idleConnection() async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits + ["--idle-timeout", "1"])
        let silent = try await RawConnection.open(port: server.port)
        let start = ContinuousClock.now
        let quiet = await silent.read(responses: nil, timeout: .seconds(8))
        #expect(quiet.closedByServer)
        #expect(ContinuousClock.now - start < .seconds(4))

        let keptAlive = try await RawConnection.open(port: server.port)
        try await keptAlive.write(RawHTTP.Request.get("/health").bytes)
        let afterRequest = await keptAlive.read(responses: nil, timeout: .seconds(8))
        #expect(afterRequest.statuses == [200])
        #expect(afterRequest.closedByServer)
    }

    @Test("a head or a body that trickles in is cut off after the read timeout")
    func trickledRequest() async throws {
        let server = try await ServerProcess.running(
            arguments: ServerProcess.liftedTargetLimits + ["--idle-timeout", "20", "--request-read-timeout", "1"])

        // A head, one byte every 100 ms: never whole within the timeout.
        let head = try await RawConnection.open(port: server.port)
        let trickle = head.writer.trickle(Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: \(String(repeating: "s", count: 200))".utf8))
        let start = ContinuousClock.now
        let cut = await head.read(responses: nil, timeout: .seconds(10))
        trickle.cancel()
        #expect(cut.closedByServer)
        #expect(ContinuousClock.now - start < .seconds(5))

        // A whole head, then a body one byte every 100 ms: 408, then closed.
        let body = try await RawConnection.open(port: server.port)
        let webhook = RawHTTP.Request.post("/api/v1/notify?platform=android&token=slow", body: swapWebhook(id: "slow"))
        let split = webhook.bytes.count - 60
        try await body.write(Array(webhook.bytes[..<split]))
        let bodyTrickle = body.writer.trickle(Array(webhook.bytes[split...]))
        let bodyStart = ContinuousClock.now
        let slowBody = await body.read(responses: nil, timeout: .seconds(10))
        bodyTrickle.cancel()
        #expect(slowBody.statuses == [408], "\(slowBody)")
        #expect(slowBody.closedByServer)
        #expect(ContinuousClock.now - bodyStart < .seconds(6))
    }

    @Test("each request on a keep-alive connection gets the whole read timeout, from its own first byte")
    func readTimeoutPerRequest() async throws {
        let server = try await ServerProcess.running(
            arguments: ServerProcess.liftedTargetLimits + ["--idle-timeout", "20", "--request-read-timeout", "1"])
        let connection = try await RawConnection.open(port: server.port)

        // Whole requests for longer than the timeout: an earlier request's clock cuts none off.
        var sent = 0
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .milliseconds(1500) {
            try await connection.write(RawHTTP.Request.get("/health").bytes)
            sent += 1
            let answers = await connection.read(responses: sent, timeout: .seconds(5))
            #expect(answers.statuses == Array(repeating: 200, count: sent), "\(answers)")
            try await Task.sleep(for: .milliseconds(100))
        }

        // Then a body that trickles in: 408 a timeout after this request began, not sooner.
        let webhook = RawHTTP.Request.post("/api/v1/notify?platform=android&token=slow", body: swapWebhook(id: "slow-2"))
        let split = webhook.bytes.count - 60
        let began = ContinuousClock.now
        try await connection.write(Array(webhook.bytes[..<split]))
        let trickle = connection.writer.trickle(Array(webhook.bytes[split...]))
        let answers = await connection.read(responses: sent + 1, timeout: .seconds(10))
        trickle.cancel()
        let took = ContinuousClock.now - began
        #expect(answers.statuses.last == 408, "\(answers)")
        #expect(took >= .milliseconds(900) && took < .seconds(4), "408 after \(took)")
    }

    @Test("past the connection cap new connections get 503 and the held ones are still answered")
    func connectionCap() async throws {
        let server = try await ServerProcess.running(
            arguments: ServerProcess.liftedTargetLimits + ["--idle-timeout", "30", "--max-connections", "40"])
        let idle = server.openDescriptors
        var held: [RawConnection] = []
        for _ in 0..<40 { held.append(try await RawConnection.open(port: server.port)) }
        // The server has accepted every one of them once it holds a descriptor for each.
        #expect(await eventually(timeout: .seconds(10)) { server.openDescriptors >= idle + 40 })

        let refused = await RawHTTP.exchange(port: server.port, request: .get("/health"), timeout: .seconds(5))
        #expect(refused.statuses == [503], "\(refused)")
        #expect(refused.bodies.first?.contains("too_many_connections") == true)

        try await held[0].write(RawHTTP.Request.get("/health").bytes)
        #expect(await held[0].read(responses: 1, timeout: .seconds(5)).statuses == [200])

        for connection in held.prefix(10) { connection.close() }
        // Admitted again once the server has let go of the closed ones.
        #expect(await eventually(timeout: .seconds(10)) { server.openDescriptors <= idle + 30 })
        let admitted = await RawHTTP.exchange(port: server.port, request: .get("/health"), timeout: .seconds(5))
        #expect(admitted.statuses == [200])
        for connection in held { connection.close() }
    }
}
