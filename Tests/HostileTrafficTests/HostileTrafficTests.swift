import Foundation
import Synchronization
import Testing

/// The fast versions of `scripts/hostile.py`: `herald serve` in a child process, attacked the
/// way the open internet would. Every request is bounded by a timeout, so a server that hangs
/// fails these tests instead of hanging the run.
@Suite("Hostile traffic", .serialized)
struct HostileTrafficTests {
    /// Statuses a client may see from a healthy server: anything but a 5xx, except the
    /// documented ones (503 retry later; the relay's 502 and 504).
    static func acceptable(_ status: Int) -> Bool { status < 500 || [502, 503, 504].contains(status) }

    @Test("hundreds of concurrent callers of every kind, wrong secrets among them, never stall the server")
    func concurrentCallers() async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let port = server.port
        var devices: [RegisteredDevice] = []
        for n in 0..<3 { devices.append(try await RegisteredDevice.register(port: port, token: "concurrent-\(n)")) }
        let phone = devices[0]

        // The mix of the report that hung the server: webhooks flowing while device calls with
        // wrong secrets, bad bodies, unknown replies and Lightning-address look-ups pile in.
        let requests: [(kind: String, request: RawHTTP.Request)] = (0..<600).map { n in
            let device = devices[n % devices.count]
            switch n % 10 {
            case 0, 1, 2: return ("webhook", .post(phone.webhookPath, body: swapWebhook(id: "c-\(n)")))
            case 3:
                return (
                    "put",
                    .method(
                        "PUT", "/api/v1/devices/\(device.id)", body: Array(#"{"push_token":"x"}"#.utf8), headers: ["Authorization: Bearer wrong-\(n)"]
                    )
                )
            case 4: return ("pushes", .get("/api/v1/devices/\(device.id)/pushes", headers: ["Authorization: Bearer wrong"]))
            case 5: return ("delete", .method("DELETE", "/api/v1/devices/\(device.id)", body: [], headers: ["Authorization: Bearer nope"]))
            case 6: return ("bad-json", .post(phone.webhookPath, body: Array(#"{"event":"swap.update","data":{"#.utf8)))
            case 7: return ("reply", .post("/api/v1/reply/\(String(repeating: "b", count: 32))", body: Array("{}".utf8)))
            case 8: return ("lnurlp", .get("/.well-known/lnurlp/user\(n)"))
            default: return ("health", .get("/health"))
            }
        }
        let acknowledged = Shared<[String]>([])
        let failures = Shared<[String]>([])
        await forEach(Array(requests.enumerated()), width: 96) { item in
            let (n, entry) = item
            let exchange = await RawHTTP.exchange(port: port, request: entry.request, timeout: .seconds(10))
            guard let status = exchange.statuses.first else {
                failures.update { $0.append("\(entry.kind) #\(n): no answer (timed out: \(exchange.timedOut))") }
                return
            }
            if !Self.acceptable(status) { failures.update { $0.append("\(entry.kind) #\(n): \(status)") } }
            if entry.kind == "webhook" && status == 200 { acknowledged.update { $0.append("c-\(n)") } }
        }
        #expect(failures.get().isEmpty, "\(failures.update { $0.prefix(10) })\n\(server.logTail())")

        let health = await RawHTTP.exchange(port: port, request: .get("/health"), timeout: .seconds(1))
        #expect(health.statuses.first == 200, "health after the storm: \(health)")
        let expected = Set(acknowledged.get())
        #expect(expected.count == 180)
        var delivered: Set<String> = []
        let end = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < end {
            delivered = Set(try await phone.deliveredSwapIDs(port: port))
            if expected.isSubset(of: delivered) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(expected.subtracting(delivered).isEmpty, "\(expected.subtracting(delivered).count) acknowledged webhooks not delivered")
        #expect(await server.stop(), "SIGTERM did not stop the server")
    }

    @Test("a seeded fuzzer over every route: no 5xx but the documented ones, no hang, and a valid webhook still delivered")
    func seededFuzz() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HERALD_FUZZ_SEED"] ?? "") ?? 0x4845_5241_4C44
        let cases = Int(ProcessInfo.processInfo.environment["HERALD_FUZZ_CASES"] ?? "") ?? 800
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let port = server.port
        var devices: [RegisteredDevice] = []
        for n in 0..<2 { devices.append(try await RegisteredDevice.register(port: port, token: "fuzz-\(n)")) }
        var generator = HostileCases(devices: devices, generator: SeededGenerator(seed: seed))
        // Cases that once took the server down, each sent as it was found, then the random ones.
        let device = devices[0]
        let regressions: [RawHTTP.Request] =
            ["nan", "inf", "-inf", "1e309", "NaN"].map { wait in
                .get("/api/v1/devices/\(device.id)/pushes?wait=\(wait)", headers: ["Authorization: Bearer \(device.secret)"])
            } + [
                .post(
                    device.webhookPath,
                    body: Array("{\"event\":\"x\",\"data\":{\"n\":9007199254740993\(String(repeating: "0", count: 150))e-150}}".utf8))
            ]
        let requests = regressions + (0..<cases).map { _ in generator.next() }

        let statuses = Shared<[Int: Int]>([:])
        let failures = Shared<[String]>([])
        await forEach(Array(requests.enumerated()), width: 32) { item in
            let (n, request) = item
            // Timeouts allow for the server's own: a head or body that never completes is cut
            // off by the server after its read timeouts.
            let exchange = await RawHTTP.exchange(port: port, request: request, timeout: .seconds(20))
            statuses.update { counts in
                for status in exchange.statuses { counts[status, default: 0] += 1 }
                if exchange.statuses.isEmpty { counts[exchange.timedOut ? -2 : -1, default: 0] += 1 }
            }
            let bad = exchange.statuses.filter { !Self.acceptable($0) }
            if !bad.isEmpty || exchange.timedOut || exchange.refused {
                let head = String(decoding: request.bytes.prefix(120), as: UTF8.self)
                failures.update { $0.append("case \(n): \(bad) timedOut=\(exchange.timedOut) refused=\(exchange.refused): \(head.debugDescription)") }
            }
        }
        let seen = statuses.get().sorted { $0.key < $1.key }.map {
            "\($0.key == -1 ? "closed" : $0.key == -2 ? "timeout" : "\($0.key)"): \($0.value)"
        }
        print("fuzz seed \(seed), \(cases) cases; statuses: \(seen.joined(separator: ", "))")
        #expect(failures.get().isEmpty, "seed \(seed): \(failures.update { $0.prefix(10) })\n\(server.logTail())")

        let health = await RawHTTP.exchange(port: port, request: .get("/health"), timeout: .seconds(1))
        #expect(health.statuses.first == 200, "health after fuzzing: \(health)")
        let final = await RawHTTP.exchange(
            port: port, request: .post(devices[0].webhookPath, body: swapWebhook(id: "after-fuzz")), timeout: .seconds(10))
        #expect(final.statuses.first == 200)
        var delivered = false
        let end = ContinuousClock.now + .seconds(10)
        while !delivered && ContinuousClock.now < end {
            delivered = try await devices[0].deliveredSwapIDs(port: port).contains("after-fuzz")
            if !delivered { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(delivered, "the valid webhook after the fuzzing was not delivered")
        #expect(await server.stop(), "SIGTERM did not stop the server")
    }

    @Test("kill -9 under a stream of webhooks loses none that were acknowledged")
    func crashCycles() async throws {
        try await restartsUnderLoad(name: "crash", senders: 4, cycles: 3) { try await $0.crashAndRestart() }
    }

    @Test("SIGTERM in the middle of a burst: every acknowledged webhook is delivered after the restart")
    func terminateMidBurst() async throws {
        try await restartsUnderLoad(name: "SIGTERM", senders: 16, cycles: 2) { try await $0.terminateAndRestart() }
    }

    /// `senders` clients post webhooks one after another while the server is restarted
    /// `cycles` times; every acknowledged webhook must be delivered afterwards.
    func restartsUnderLoad(
        name: String,
        senders: Int,
        cycles: Int,
        restart: (ServerProcess) async throws -> Bool
    ) async throws {
        let server = try await ServerProcess.running(arguments: ServerProcess.liftedTargetLimits)
        let port = server.port
        let phone = try await RegisteredDevice.register(port: port, token: "\(name.lowercased())-phone")
        let acknowledged = Shared<[String]>([])
        let running = Shared(true)
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for sender in 0..<senders {
                    group.addTask {
                        var n = 0
                        while running.get() {
                            n += 1
                            let id = "k\(sender)-\(n)"
                            let exchange = await RawHTTP.exchange(
                                port: port, request: .post(phone.webhookPath, body: swapWebhook(id: id)), timeout: .seconds(5))
                            if exchange.statuses.first == 200 { acknowledged.update { $0.append(id) } }
                            if exchange.refused { try? await Task.sleep(for: .milliseconds(10)) }
                        }
                    }
                }
            }
        }
        for _ in 0..<cycles {
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...900)))
            #expect(try await restart(server), "\(server.logTail())")
        }
        try await Task.sleep(for: .milliseconds(500))
        running.update { $0 = false }
        await load.value

        let expected = Set(acknowledged.get())
        #expect(expected.count > 100)
        var deliveries: [String] = []
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end {
            deliveries = try await phone.deliveredSwapIDs(port: port)
            if expected.isSubset(of: Set(deliveries)) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let lost = expected.subtracting(deliveries)
        let duplicates = deliveries.count - Set(deliveries).count
        print(
            "\(name) cycles: \(cycles), acknowledged \(expected.count), delivered \(Set(deliveries).count), lost \(lost.count), sent twice \(duplicates)"
        )
        #expect(lost.isEmpty, "\(lost.count) acknowledged webhooks lost")
        #expect(await server.stop())
    }
}
