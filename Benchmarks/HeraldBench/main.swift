// herald-bench: how fast webhooks become APNs requests on this machine.
//
// Points at any APNs-shaped server through the same HERALD_APNS_* / HERALD_TLS_CA_FILE
// settings as `herald serve`; with none set it starts the local APNs look-alike (HTTP/2 + TLS,
// ES256 checks) in this process. Prints three figures:
//   1. raw sends/s through the APNs provider alone,
//   2. end-to-end acknowledged webhooks/s (HTTP → group commit → dispatcher → APNs),
//   3. webhook → APNs request latency percentiles at a paced 1,000 events/s.
import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

struct BenchOptions {
    var rawSends = 20_000
    var rawConcurrency = 256
    var webhooks = 30_000
    var webhookConcurrency = 128
    var rate = 1_000
    var seconds = 10
    /// Drive phase 2 with wrk (a separate, cheap C process) instead of the in-process client.
    var wrk = false
    /// Replace APNs with a provider that accepts at once: the NDS's own ceiling, without the
    /// CPU the local APNs look-alike and the HTTP/2 client take on the same two cores.
    var instantProvider = false

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            if flag == "--wrk" {
                wrk = true
                continue
            }
            if flag == "--instant-provider" {
                instantProvider = true
                continue
            }
            let value = iterator.next().flatMap(Int.init) ?? 0
            switch flag {
            case "--raw-sends": rawSends = value
            case "--raw-concurrency": rawConcurrency = value
            case "--webhooks": webhooks = value
            case "--webhook-concurrency": webhookConcurrency = value
            case "--rate": rate = value
            case "--seconds": seconds = value
            default:
                print("usage: herald-bench [--raw-sends N] [--raw-concurrency N] [--webhooks N] [--webhook-concurrency N] [--rate N] [--seconds N] [--wrk] [--instant-provider]")
                exit(2)
            }
        }
    }
}

/// Remembers when each bench event reached the provider, keyed by its swap id.
final class TimingProvider: PushProvider {
    let inner: any PushProvider
    let sendTimes = NIOLockedValueBox([String: ContinuousClock.Instant]())
    var name: String { inner.name }

    init(_ inner: any PushProvider) { self.inner = inner }

    func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        try inner.validate(message, for: target)
    }

    func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        if let payload = message.data["notification_payload"],
            let update = try? WireJSON.decode(SwapUpdate.self, from: Data(payload.utf8))
        {
            let now = ContinuousClock.now
            sendTimes.withLockedValue { $0[update.id] = now }
        }
        return await inner.send(message, to: target, logger: logger)
    }
}

/// Accepts every push at once, without a network: measures the NDS alone.
struct InstantProvider: PushProvider {
    var name: String { "instant" }
    func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        try APNsPayload.validate(message)
    }
    func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        .delivered(id: nil)
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return sorted[max(index, 0)]
}

func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15 }

let options = BenchOptions(arguments: CommandLine.arguments)
var logger = Logger(label: "herald-bench")
logger.logLevel = .warning
let env = ProcessInfo.processInfo.environment
let deviceToken = String(repeating: "ab", count: 32)

// MARK: The APNs side: configured, or the local look-alike.

var settings = try ProviderSettings(environment: env)
var mock: RunningMockServer?
var mockServer: MockAPNsServer?
if settings.apns == nil {
    let key = TestKeys.apnsP8()
    let certificate = try TestCertificate.make()
    let server = MockAPNsServer(key: key, topic: "org.herald.bench", certificate: certificate)
    let running = try await server.start()
    mock = running
    mockServer = server
    settings.apns = APNsConfiguration(
        signingKeyPEM: key.privateKeyPEM,
        keyID: key.keyID,
        teamID: key.teamID,
        topic: "org.herald.bench",
        environment: .custom(running.baseURL)
    )
    settings.extraTrustRootsFile = try certificate.writeCAToTemporaryFile()
    print("APNs: local look-alike at \(running.baseURL) (HTTP/2 + TLS, ES256 verified)")
} else {
    print("APNs: \(settings.apns!.environment)")
}
let httpClient = try PushHTTPClient.make(extraTrustRootsPEMFile: settings.extraTrustRootsFile)
let apns = try APNsProvider(configuration: settings.apns!, httpClient: httpClient)
let target = PushTarget(platform: .ios, token: deviceToken)

// MARK: 1. Raw provider throughput.

do {
    let message = PushMessage.wake(
        try WebhookRequest(form: .event, name: "swap.update", data: ["id": "raw", "status": "transaction.mempool"])
            .pushData(appData: nil)
    )
    // Warm up: connection, TLS, provider token.
    _ = await apns.send(message, to: target, logger: logger)
    let started = ContinuousClock.now
    let failures = NIOLockedValueBox(0)
    await withTaskGroup(of: Void.self) { group in
        var next = 0
        for _ in 0..<options.rawConcurrency {
            group.addTask {}
        }
        for await _ in group {
            guard next < options.rawSends else { continue }
            next += 1
            group.addTask {
                let outcome = await apns.send(message, to: target, logger: logger)
                if outcome.kind != .delivered { failures.withLockedValue { $0 += 1 } }
            }
        }
    }
    let elapsed = ContinuousClock.now - started
    let rate = Double(options.rawSends) / (ms(elapsed) / 1000)
    print(String(format: "1. raw APNs sends: %d in %.2f s = %.0f sends/s (concurrency %d, failures %d)",
                 options.rawSends, ms(elapsed) / 1000, rate, options.rawConcurrency, failures.withLockedValue { $0 }))
}

// MARK: The NDS.

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let store = try SQLiteStore(path: folder.appendingPathComponent("bench.sqlite").path)
let timing = TimingProvider(options.instantProvider ? InstantProvider() : apns)
let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
let app = buildApplication(
    configuration: HeraldServerConfiguration(host: "127.0.0.1", port: 0, settings: ServerSettings(publicURL: "http://127.0.0.1")),
    store: store,
    providers: PushRouter(ios: timing, android: nil),
    logger: logger,
    onServerRunning: { port in portContinuation.yield(port) }
)
let serviceGroup = ServiceGroup(configuration: .init(services: [app], logger: logger))
let serverTask = Task { try await serviceGroup.run() }
let port = await portStream.first(where: { _ in true }) ?? 0
let base = "http://127.0.0.1:\(port)/api/v1/notify?platform=ios&token=\(deviceToken)"

var clientConfiguration = HTTPClient.Configuration()
clientConfiguration.connectionPool = .init(
    idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.webhookConcurrency
)
let loadClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)

func postWebhook(id: String) async -> Bool {
    var request = HTTPClientRequest(url: base)
    request.method = .POST
    request.headers.add(name: "content-type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: #"{"event":"swap.update","data":{"id":"\#(id)","status":"transaction.mempool"}}"#))
    do {
        let response = try await loadClient.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 4096)
        return response.status == .ok
    } catch {
        return false
    }
}

func waitForSends(_ count: Int, timeout: Duration) async {
    let deadline = ContinuousClock.now + timeout
    while timing.sendTimes.withLockedValue({ $0.count }) < count, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
}

// MARK: 2. End-to-end throughput.

/// Runs wrk against the webhook with unique swap ids; returns (acknowledged, seconds).
func runWrk(seconds: Int, connections: Int) throws -> (Int, Double) {
    let script = folder.appendingPathComponent("webhook.lua")
    try """
        wrk.method = "POST"
        wrk.headers["Content-Type"] = "application/json"
        counter = 0
        request = function()
          counter = counter + 1
          return wrk.format(nil, nil, nil, '{"event":"swap.update","data":{"id":"wrk-' .. counter .. '","status":"transaction.mempool"}}')
        end
        """.write(to: script, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
    process.arguments = ["-t1", "-c\(connections)", "-d\(seconds)s", "-s", script.path, base]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // "123456 requests in 10.00s, …" and, when some failed, "Non-2xx or 3xx responses: N".
    let words = output.split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard let index = words.firstIndex(of: "requests"), let total = Int(words[index - 1]),
        let elapsed = Double(words[index + 2].dropLast(2))
    else { throw CocoaError(.fileReadCorruptFile) }
    var failed = 0
    if let range = output.range(of: "Non-2xx or 3xx responses: ") {
        failed = Int(output[range.upperBound...].prefix(while: \.isNumber)) ?? 0
    }
    return (total - failed, elapsed)
}

do {
    for i in 0..<200 { _ = await postWebhook(id: "warm-\(i)") }
    await waitForSends(200, timeout: .seconds(30))
    timing.sendTimes.withLockedValue { $0.removeAll() }

    let total: Int
    let ackSeconds: Double
    let started = ContinuousClock.now
    if options.wrk, FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") {
        (total, ackSeconds) = try runWrk(seconds: options.seconds, connections: options.webhookConcurrency)
    } else {
        let acked = NIOLockedValueBox(0)
        await withTaskGroup(of: Void.self) { group in
            let perWorker = options.webhooks / options.webhookConcurrency
            for worker in 0..<options.webhookConcurrency {
                group.addTask {
                    for i in 0..<perWorker where await postWebhook(id: "tp-\(worker)-\(i)") {
                        acked.withLockedValue { $0 += 1 }
                    }
                }
            }
        }
        ackSeconds = ms(ContinuousClock.now - started) / 1000
        total = acked.withLockedValue { $0 }
    }
    await waitForSends(total, timeout: .seconds(120))
    let sentSeconds = ms(ContinuousClock.now - started) / 1000
    print(String(format: "2. end to end (%@%@): %d webhooks acknowledged in %.2f s = %.0f webhooks/s; %d reached APNs after %.2f s = %.0f/s (%d client connections)",
                 options.wrk ? "wrk" : "in-process client", options.instantProvider ? ", instant provider" : "", total, ackSeconds, Double(total) / ackSeconds,
                 timing.sendTimes.withLockedValue { $0.count }, sentSeconds,
                 Double(total) / sentSeconds, options.webhookConcurrency))
    timing.sendTimes.withLockedValue { $0.removeAll() }
}

// MARK: 3. Latency at a paced rate.

do {
    let count = options.rate * options.seconds
    let interval = Duration.nanoseconds(1_000_000_000 / Int64(options.rate))
    let webhookStarts = NIOLockedValueBox([String: ContinuousClock.Instant]())
    let started = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
        for i in 0..<count {
            let due = started + interval * i
            let now = ContinuousClock.now
            if due > now { try? await Task.sleep(until: due, clock: .continuous) }
            group.addTask {
                let id = "lat-\(i)"
                webhookStarts.withLockedValue { $0[id] = ContinuousClock.now }
                _ = await postWebhook(id: id)
            }
        }
    }
    await waitForSends(count, timeout: .seconds(60))
    let starts = webhookStarts.withLockedValue { $0 }
    let sends = timing.sendTimes.withLockedValue { $0 }
    let latencies = starts.compactMap { id, start in sends[id].map { ms($0 - start) } }.sorted()
    print(String(format: "3. webhook → APNs request at %d/s for %d s: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%d of %d measured)",
                 options.rate, options.seconds, percentile(latencies, 0.5), percentile(latencies, 0.9),
                 percentile(latencies, 0.99), latencies.last ?? .nan, latencies.count, count))
}

if let mockServer {
    let connections = await mockServer.connections.connectionCount
    let streams = await mockServer.connections.maxConcurrentRequestsPerConnection
    print("APNs connections used: \(connections); most concurrent streams on one connection: \(streams)")
}

// MARK: Shutdown.

await serviceGroup.triggerGracefulShutdown()
_ = try? await serverTask.value
try await loadClient.shutdown()
try await httpClient.shutdown()
if let mock { await mock.stop() }
try? FileManager.default.removeItem(at: folder)
