import Foundation
import HeraldPush
import HeraldTestSupport
import NIOCore
import NIOHPACK
import NIOPosix
import Testing

/// The HTTP/2 transport against a server that does what real connections do: multiplex
/// hundreds of streams, send GOAWAY mid-burst, drop, lower their stream limit, go idle.
@Suite("Push transport")
struct PushTransportTests {
    /// Sends `count` requests at once, each to its own path, and returns the statuses by path.
    func burst(
        _ count: Int,
        script: ScriptedHTTP2Server.Script,
        configure: (inout PushHTTPClient.Configuration) -> Void = { _ in },
        after: (PushEndpoint, ScriptedHTTP2Server) async throws -> Void = { _, _ in }
    ) async throws -> (statuses: [String: Int], server: ScriptedHTTP2Server.Observations) {
        let certificate = try TestCertificate.make()
        let server = ScriptedHTTP2Server(script: script, certificate: certificate)
        let baseURL = try await server.start()
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        var configuration = PushHTTPClient.Configuration(extraTrustRootsPEMFile: caFile)
        configure(&configuration)
        let client = try PushHTTPClient(configuration: configuration)
        do {
            let endpoint = try client.endpoint(baseURL)
            let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for n in 0..<count {
                    group.addTask {
                        let path = "/3/device/\(n)"
                        var headers = HPACKHeaders()
                        headers.add(name: "apns-topic", value: "com.example.wallet")
                        let response = try await endpoint.execute(
                            PushHTTPRequest(path: path, headers: headers, body: ByteBuffer(string: #"{"aps":{}}"#)),
                            timeout: .seconds(20)
                        )
                        return (path, response.status)
                    }
                }
                var statuses: [String: Int] = [:]
                for try await (path, status) in group { statuses[path] = status }
                return statuses
            }
            try await after(endpoint, server)
            await client.shutdown()
            await server.stop()
            return (statuses, server.observed)
        } catch {
            await client.shutdown()
            await server.stop()
            throw error
        }
    }

    func expectEachProcessedOnce(_ observed: ScriptedHTTP2Server.Observations, count: Int) {
        let counts = Dictionary(observed.processed.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counts.count == count)
        #expect(
            counts.values.allSatisfy { $0 == 1 },
            "processed twice: \(counts.filter { $0.value > 1 }.keys.sorted()), received per connection: \(observed.received)")
    }

    @Test("hundreds of concurrent sends share one connection, as many streams as the server allows")
    func multiplexes() async throws {
        var script = ScriptedHTTP2Server.Script()
        script.maxConcurrentStreams = 1000
        script.responseDelay = .milliseconds(200)
        let (statuses, observed) = try await burst(600, script: script)
        #expect(statuses.count == 600 && statuses.values.allSatisfy { $0 == 200 })
        #expect(observed.connections == 1)
        // Far beyond the 100 streams a client assumes before the server's SETTINGS.
        #expect(observed.maxOpenStreams > 100)
        expectEachProcessedOnce(observed, count: 600)
    }

    @Test("a GOAWAY mid-burst loses nothing and sends nothing twice: unprocessed streams move to a new connection")
    func goAway() async throws {
        var script = ScriptedHTTP2Server.Script()
        script.goAwayAfter = 50
        script.responseDelay = .milliseconds(20)
        let (statuses, observed) = try await burst(400, script: script)
        #expect(statuses.count == 400 && statuses.values.allSatisfy { $0 == 200 })
        #expect(observed.connections >= 2)
        #expect((observed.received[1] ?? 0) >= 50)
        expectEachProcessedOnce(observed, count: 400)
    }

    @Test("a connection dropped with sends in flight is replaced and every send completes")
    func dropped() async throws {
        var script = ScriptedHTTP2Server.Script()
        script.dropAfter = 40
        script.responseDelay = .milliseconds(300)
        let (statuses, observed) = try await burst(200, script: script)
        #expect(statuses.count == 200 && statuses.values.allSatisfy { $0 == 200 })
        #expect(observed.connections >= 2)
        expectEachProcessedOnce(observed, count: 200)
    }

    @Test("a stream limit lowered mid-connection is honoured")
    func loweredLimit() async throws {
        var script = ScriptedHTTP2Server.Script()
        script.maxConcurrentStreams = 100
        script.lowerStreamLimit = (afterRequests: 10, to: 5)
        script.responseDelay = .milliseconds(10)
        let (statuses, observed) = try await burst(300, script: script)
        #expect(statuses.count == 300 && statuses.values.allSatisfy { $0 == 200 })
        #expect(observed.connections == 1)
        #expect(observed.maxOpenAfterLowering > 0)
        #expect(observed.maxOpenAfterLowering <= 5)
        expectEachProcessedOnce(observed, count: 300)
    }

    @Test("an idle connection is kept alive with PINGs and stays the one connection")
    func keepAlive() async throws {
        let (statuses, observed) = try await burst(
            1,
            script: .init(),
            configure: {
                $0.pingInterval = .milliseconds(200)
                $0.sweepInterval = .milliseconds(50)
            },
            after: { endpoint, server in
                // Idle from here on: only the keep-alive speaks.
                let deadline = ContinuousClock.now + .seconds(15)
                while server.observed.pings < 2 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                let response = try await endpoint.execute(
                    PushHTTPRequest(path: "/3/device/again", headers: [:], body: ByteBuffer(string: "{}")),
                    timeout: .seconds(5)
                )
                #expect(response.status == 200)
            }
        )
        #expect(statuses["/3/device/0"] == 200)
        #expect(observed.pings >= 2)
        #expect(observed.connections == 1)
    }

    @Test("a send started on a local loop goes over that loop's own connection, up to its in-flight limit; the rest share")
    func localLoop() async throws {
        let certificate = try TestCertificate.make()
        var script = ScriptedHTTP2Server.Script()
        script.responseDelay = .milliseconds(300)
        let server = ScriptedHTTP2Server(script: script, certificate: certificate)
        let baseURL = try await server.start()
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { group.shutdownGracefully { _ in } }
        let local = group.next()
        let client = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: caFile), localLoops: [local])
        let endpoint = try client.endpoint(baseURL)
        func send(_ path: String) async throws -> Int {
            try await endpoint.execute(PushHTTPRequest(path: path, headers: [:], body: ByteBuffer(string: "{}")), timeout: .seconds(20))
                .status
        }

        // From the local loop: its own connection, opened there; no shared one yet.
        let first = try await Task(executorPreference: OnLoop(local)) { try await send("/3/device/first") }.value
        #expect(first == 200)
        #expect(endpoint.openConnections(on: local) == 1 && endpoint.openConnections == 1)

        // From the pool: the shared connection, on the client's group.
        #expect(try await send("/3/device/pooled") == 200)
        #expect(endpoint.openConnections == 2 && endpoint.openConnections(on: local) == 1)

        // Ten at once from the local loop: four ride its connection, the other six the shared one.
        let statuses = try await Task(executorPreference: OnLoop(local)) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<10 { group.addTask { try await send("/3/device/burst-\(n)") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }.value
        #expect(statuses.count == 10 && statuses.allSatisfy { $0 == 200 })
        let observed = server.observed
        #expect(observed.connections == 2)
        #expect(observed.received[1] == 1 + PushEndpoint.localInFlightLimit, "the local connection: \(observed.received)")
        #expect(observed.received[2] == 1 + 10 - PushEndpoint.localInFlightLimit, "the shared connection: \(observed.received)")
        await client.shutdown()
        await server.stop()
    }

    @Test("a refused connection fails the send with the connect error, not a timeout at its deadline")
    func refused() async throws {
        let client = try PushHTTPClient()
        let endpoint = try client.endpoint("https://127.0.0.1:9")
        do {
            _ = try await endpoint.execute(PushHTTPRequest(path: "/", headers: [:], body: ByteBuffer()), timeout: .seconds(60))
            Issue.record("a send to a closed port succeeded")
        } catch {
            #expect(error as? PushTransportError != .timeout)
        }
        await client.shutdown()
    }

    @Test("base URLs: origin, port and path prefix")
    func origins() throws {
        let origin = try PushOrigin(url: "https://api.push.apple.com")
        #expect(origin.port == 443 && origin.host == "api.push.apple.com" && origin.tls)
        #expect(try PushOrigin(url: "http://127.0.0.1:8080/prefix/").port == 8080)
        #expect(try PushOrigin(url: "https://[::1]:8443").host == "::1")
        #expect(PushOrigin.path(of: "https://proxy.example/apns/") == "/apns")
        #expect(PushOrigin.path(of: "https://oauth2.googleapis.com/token") == "/token")
        #expect(throws: PushTransportError.self) { try PushOrigin(url: "ftp://x") }
        #expect(throws: PushTransportError.self) { try PushOrigin(url: "https://host:99999") }
    }
}

/// Runs every job on one event loop: a task that starts its sends there, as the dispatcher's do
/// on SQLite's writer thread.
private final class OnLoop: TaskExecutor, Sendable {
    let loop: any EventLoop
    init(_ loop: any EventLoop) { self.loop = loop }
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
