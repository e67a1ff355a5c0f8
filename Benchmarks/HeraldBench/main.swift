// herald-bench: how fast webhooks become APNs requests on this machine.
//
// Points at any APNs-shaped server through the same HERALD_APNS_* / HERALD_TLS_CA_FILE
// settings as `herald serve`; with none it starts the local APNs look-alike (HTTP/2 + TLS,
// ES256 checks) in a child process (`--apns-in-process` keeps it in this one). Prints:
//   1. raw sends/s through the APNs provider alone,
//   2. end-to-end acknowledged webhooks/s (HTTP → group commit → dispatcher → APNs),
//   3. webhook → APNs request latency percentiles at a paced 1,000 events/s,
// each with the CPU time per webhook of this process, the look-alike and the load generator.
// `--http-floor` measures a bare Hummingbird route instead; `--micro` the steps of one webhook.
// `herald-bench wake` is a different bench: a simulated fleet of phones waking for payments
// against `herald serve` (see Benchmarks/README.md).
// HERALD_BENCH_TAIL=1 lists phase 3's slowest events by send time (periodic stalls cluster);
// HERALD_BENCH_IN_PROCESS_PACER=1 paces phase 3 from this process instead of Benchmarks/pacer.py.
import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldSQLite
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
    /// Only measure a Hummingbird route that reads the body and answers: the framework's floor.
    var httpFloor = false
    /// Stop after phase 1 (Benchmarks/fastpath.py runs the NDS as `herald serve` instead).
    var rawOnly = false
    /// Run the APNs look-alike in a child process, so its CPU is counted apart from the NDS's.
    var apnsProcess = true
    /// Be that child: serve the look-alike, print its settings, run until stdin closes.
    var serveAPNs = false

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            if flag == "--wrk" {
                wrk = true
                continue
            }
            if flag == "--micro" { continue }
            if flag == "--apns-in-process" {
                apnsProcess = false
                continue
            }
            if flag == "--serve-apns" {
                serveAPNs = true
                continue
            }
            if flag == "--http-floor" {
                httpFloor = true
                continue
            }
            if flag == "--raw-only" {
                rawOnly = true
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
                print(
                    "usage: herald-bench [--raw-sends N] [--raw-concurrency N] [--webhooks N] [--webhook-concurrency N] [--rate N] [--seconds N] [--wrk] [--raw-only] [--instant-provider] [--apns-in-process] [--http-floor] [--micro]"
                )
                exit(2)
            }
        }
    }
}

/// Remembers when each bench event reached the provider, keyed by its swap id.
final class TimingProvider: PushProvider {
    let inner: any PushProvider
    let sendTimes = NIOLockedValueBox([String: ContinuousClock.Instant]())
    /// The same moments as CLOCK_MONOTONIC nanoseconds, the clock the out-of-process pacer uses.
    let sendNanos = NIOLockedValueBox([String: Int64]())
    var name: String { inner.name }

    init(_ inner: any PushProvider) { self.inner = inner }

    func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        try inner.validate(message, for: target)
    }

    func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        // The id is read out of the payload string rather than decoded: the bench's own
        // bookkeeping should cost this process as little as possible.
        if let payload = message.data["notification_payload"], let id = Self.swapID(in: payload) {
            let now = ContinuousClock.now
            sendTimes.withLockedValue { $0[id] = now }
            if id.hasPrefix("lat-") {
                var spec = timespec()
                clock_gettime(CLOCK_MONOTONIC, &spec)
                let nanos = Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
                sendNanos.withLockedValue { $0[id] = nanos }
            }
        }
        return await inner.send(message, to: target, logger: logger)
    }

    /// The value of `"id"` in a bench payload (`{"id":"…","status":"…"}`, no escapes in it).
    static func swapID(in payload: String) -> String? {
        guard let key = payload.range(of: #""id":""#) else { return nil }
        let rest = payload[key.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
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

// `herald-bench wake`: the fleet simulation (Wake/WakeBench.swift), a separate bench.
if CommandLine.arguments.dropFirst().first == "wake" {
    exit(await WakeBench.run(arguments: Array(CommandLine.arguments.dropFirst(2))))
}

let options = BenchOptions(arguments: CommandLine.arguments)
var logger = Logger(label: "herald-bench")
logger.logLevel = .warning
let env = ProcessInfo.processInfo.environment
let deviceToken = String(repeating: "ab", count: 32)

// MARK: 0. Costs of the steps of one webhook, on request.

if CommandLine.arguments.contains("--micro") {
    func time(_ name: String, _ n: Int = 100_000, _ body: () throws -> Void) rethrows {
        for _ in 0..<1000 { try body() }
        let start = ContinuousClock.now
        for _ in 0..<n { try body() }
        print(String(format: "  %@: %.2f µs", name, ms(ContinuousClock.now - start) * 1000 / Double(n)))
    }
    let body = Data(#"{"event":"swap.update","data":{"id":"abc-123","status":"transaction.mempool"}}"#.utf8)
    let webhook = try WireJSON.decode(WebhookRequest.self, from: body)
    let pushData = try webhook.pushData(appData: nil)
    let message = PushMessage.wake(pushData, collapseID: "swap:abc-123", expiresAt: Date())
    try time("decode webhook body (JSONParser, as the server does)") {
        _ = try body.withUnsafeBytes { try WebhookRequest(parsing: $0) }
    }
    try time("decode webhook body (JSONDecoder)") { _ = try JSONDecoder().decode(WebhookRequest.self, from: body) }
    try time("validate data") { try webhook.validate() }
    try time("push data (payload string)") { _ = try webhook.pushData(appData: nil) }
    try time("render APNs payload") { _ = try APNsPayload.render(message) }
    try time("validate APNs message") { try APNsPayload.validate(message) }
    time("write stored message") { _ = message.storedJSON() }
    try time("encode stored message with JSONEncoder") { _ = try WireJSON.encode(message) }
    do {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-micro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore(path: folder.appendingPathComponent("micro.sqlite").path)
        let payload = message.storedJSON()
        var enqueueTime = Duration.zero
        var completeTime = Duration.zero
        let batches = 200
        for _ in 0..<batches {
            let jobs = (0..<100).map { _ in
                NewJob(
                    destination: .device(.ios), token: deviceToken, notificationType: "swap_updated", payload: payload,
                    idempotencyKey: nil, expiresAt: Date().addingTimeInterval(3600), app: Device.defaultApp)
            }
            var start = ContinuousClock.now
            _ = try await store.enqueue(jobs, now: Date(), leaseUntil: Date().addingTimeInterval(300))
            enqueueTime += ContinuousClock.now - start
            start = ContinuousClock.now
            try await store.complete(jobs.map { JobCompletion(job: OutboxJob($0, createdAt: Date()), resolution: .delivered) }, now: Date())
            completeTime += ContinuousClock.now - start
            try await store.checkpoint()
        }
        print(String(format: "  store a job (batches of 100): %.2f µs", ms(enqueueTime) * 1000 / Double(batches * 100)))
        print(String(format: "  record a delivery (batches of 100): %.2f µs", ms(completeTime) * 1000 / Double(batches * 100)))
    }
    let metrics = HeraldMetrics()
    time("count a received webhook (metrics)") { metrics.received(type: "swap_updated") }
    time("count a send (metrics)") { metrics.sent(provider: "apns", outcome: "delivered") }
    time("record a send latency (metrics)") { metrics.sendLatency.record(.milliseconds(3)) }
    let stored = try WireJSON.encode(message)
    try time("read stored message with JSONDecoder") { _ = try WireJSON.decode(PushMessage.self, from: stored) }
    try time("read stored message (as a claimed job is read)") { _ = try PushMessage(storedJSON: stored) }
    exit(0)
}

// MARK: 0. The framework's floor, on request.

if options.httpFloor {
    let router = Router()
    router.post("notify") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 65536)
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"id":"\#(body.readableBytes)"}"#)))
    }
    let (floorPorts, floorPort) = AsyncStream.makeStream(of: Int.self)
    let floorApp = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { floorPort.yield($0.localAddress?.port ?? 0) }, logger: logger)
    let floorGroup = ServiceGroup(configuration: .init(services: [floorApp], logger: logger))
    let floorTask = Task { try await floorGroup.run() }
    let floorURL = "http://127.0.0.1:\(await floorPorts.first(where: { _ in true }) ?? 0)/notify"
    let process = Process()
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("floor-\(UUID().uuidString).lua")
    try #"wrk.method = "POST"\#nwrk.body = '{"event":"swap.update","data":{"id":"x","status":"transaction.mempool"}}'"#
        .write(to: script, atomically: true, encoding: .utf8)
    process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
    process.arguments = ["-t1", "-c\(options.webhookConcurrency)", "-d\(options.seconds)s", "-s", script.path, floorURL]
    try process.run()
    process.waitUntilExit()
    await floorGroup.triggerGracefulShutdown()
    _ = try? await floorTask.value
    exit(0)
}

// MARK: CPU accounting.

/// CPU seconds used so far by a process (user + system), from /proc. With `children`, the
/// waited-for children of this process instead (wrk, once it has exited).
func cpuSeconds(pid: Int32? = nil, children: Bool = false) -> Double {
    let path = pid.map { "/proc/\($0)/stat" } ?? "/proc/self/stat"
    guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return .nan }
    // Fields after "(comm)": state is field 3; utime 14, stime 15, cutime 16, cstime 17.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let first = children ? 13 : 11
    guard fields.count > first + 1, let a = Double(fields[first]), let b = Double(fields[first + 1]) else { return .nan }
    return (a + b) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

// MARK: The APNs side: configured, or the local look-alike (here or in a child process).

if options.serveAPNs {
    let key = TestKeys.apnsP8()
    let certificate = try TestCertificate.make()
    let server = MockAPNsServer(key: key, topic: "org.herald.bench", certificate: certificate, recordsRequests: false)
    let running = try await server.start()
    let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-apns-\(UUID().uuidString).p8")
    try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
    print("url=\(running.baseURL)")
    print("key=\(keyFile.path)")
    print("keyid=\(key.keyID)")
    print("teamid=\(key.teamID)")
    print("ca=\(try certificate.writeCAToTemporaryFile())")
    print("ready")
    fflush(nil)
    // Until the parent closes our stdin.
    _ = FileHandle.standardInput.readDataToEndOfFile()
    let connections = await server.connections.connectionCount
    let streams = await server.connections.maxConcurrentRequestsPerConnection
    FileHandle.standardError.write(
        Data(
            "APNs connections used: \(connections); most concurrent streams on one connection: \(streams)\n".utf8))
    try? FileManager.default.removeItem(at: keyFile)
    exit(0)
}

var settings = try ProviderSettings(environment: env)
var mock: RunningMockServer?
var mockServer: MockAPNsServer?
var apnsChild: Process?
let apnsChildInput = Pipe()
// With the instant provider the look-alike serves only phase 1: no need for a process of its own.
if settings.apns == nil, options.apnsProcess, !options.instantProvider {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = ["--serve-apns"]
    let output = Pipe()
    child.standardOutput = output
    child.standardInput = apnsChildInput
    try child.run()
    var values: [String: String] = [:]
    var buffer = Data()
    while !buffer.contains(Data("ready\n".utf8)) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        buffer.append(chunk)
    }
    for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
    }
    guard let url = values["url"], let keyFile = values["key"], let keyID = values["keyid"], let teamID = values["teamid"],
        let ca = values["ca"]
    else {
        print("the APNs look-alike process did not start")
        exit(1)
    }
    settings.apns = APNsConfiguration(
        signingKeyPEM: try String(contentsOfFile: keyFile, encoding: .utf8),
        keyID: keyID,
        teamID: teamID,
        topic: "org.herald.bench",
        environment: .custom(url)
    )
    settings.extraTrustRootsFile = ca
    apnsChild = child
    print("APNs: local look-alike in process \(child.processIdentifier) at \(url) (HTTP/2 + TLS, ES256 verified)")
} else if settings.apns == nil {
    let key = TestKeys.apnsP8()
    let certificate = try TestCertificate.make()
    let server = MockAPNsServer(key: key, topic: "org.herald.bench", certificate: certificate, recordsRequests: false)
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

/// CPU used by this process, the look-alike child and exited children (wrk) since `start`.
struct CPUSample {
    var apnsPID: Int32?
    var own = cpuSeconds()
    var apns: Double
    var children = cpuSeconds(children: true)

    init(apnsPID: Int32?) {
        self.apnsPID = apnsPID
        apns = apnsPID.map { cpuSeconds(pid: $0) } ?? 0
    }

    func report(since start: CPUSample, per count: Int) -> String {
        let perItem = { (seconds: Double) in seconds / Double(max(count, 1)) * 1e6 }
        var text = String(format: "CPU per webhook: this process %.0f µs", perItem(own - start.own))
        if apnsPID != nil { text += String(format: ", APNs look-alike %.0f µs", perItem(apns - start.apns)) }
        if children > start.children { text += String(format: ", load generator %.0f µs", perItem(children - start.children)) }
        return text
    }
}

let httpClient = try PushHTTPClient(configuration: .init(extraTrustRootsPEMFile: settings.extraTrustRootsFile))
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
    let cpuStart = CPUSample(apnsPID: apnsChild?.processIdentifier)
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
    print(
        String(
            format: "1. raw APNs sends: %d in %.2f s = %.0f sends/s (concurrency %d, failures %d)",
            options.rawSends, ms(elapsed) / 1000, rate, options.rawConcurrency, failures.withLockedValue { $0 }))
    print(
        "   "
            + CPUSample(apnsPID: apnsChild?.processIdentifier).report(since: cpuStart, per: options.rawSends).replacingOccurrences(
                of: "webhook", with: "send"))
}

if options.rawOnly {
    await httpClient.shutdown()
    exit(0)
}

// MARK: The NDS.

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let store = try SQLiteStore(path: folder.appendingPathComponent("bench.sqlite").path)
let timing = TimingProvider(options.instantProvider ? InstantProvider() : apns)
let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
let app = buildApplication(
    configuration: HeraldServerConfiguration(
        host: "127.0.0.1", port: 0,
        // Every webhook goes to one token: lift the per-target limit the bench is not measuring.
        settings: ServerSettings(publicURL: "http://127.0.0.1", targetPushesPerMinute: Int(Int32.max), targetPushBurst: Int(Int32.max))
    ),
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
    let cpuStart = CPUSample(apnsPID: apnsChild?.processIdentifier)
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
    print(
        String(
            format:
                "2. end to end (%@%@): %d webhooks acknowledged in %.2f s = %.0f webhooks/s; %d reached APNs after %.2f s = %.0f/s (%d client connections)",
            options.wrk ? "wrk" : "in-process client", options.instantProvider ? ", instant provider" : "", total, ackSeconds,
            Double(total) / ackSeconds,
            timing.sendTimes.withLockedValue { $0.count }, sentSeconds,
            Double(total) / sentSeconds, options.webhookConcurrency))
    print("   " + CPUSample(apnsPID: apnsChild?.processIdentifier).report(since: cpuStart, per: total))
    timing.sendTimes.withLockedValue { $0.removeAll() }
}

// MARK: 3. Latency at a paced rate.

/// The paced load comes from a small Python process when there is one (Benchmarks/pacer.py), so
/// the load client does not share this process's CPU with the NDS; otherwise from in here.
let pacerScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("pacer.py")
let usePacer =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    && FileManager.default.fileExists(atPath: pacerScript.path) && env["HERALD_BENCH_IN_PROCESS_PACER"] == nil

do {
    let count = options.rate * options.seconds
    let interval = Duration.nanoseconds(1_000_000_000 / Int64(options.rate))
    let webhookStarts = NIOLockedValueBox([String: ContinuousClock.Instant]())
    let cpuStart = CPUSample(apnsPID: apnsChild?.processIdentifier)
    let started = ContinuousClock.now
    if usePacer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            pacerScript.path, "127.0.0.1", String(port), "/api/v1/notify?platform=ios&token=\(deviceToken)",
            String(options.rate), String(options.seconds), "32",
        ]
        try process.run()
        process.waitUntilExit()
    } else {
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
    }
    await waitForSends(count, timeout: .seconds(60))
    var latencies: [Double]
    if usePacer {
        // Ids are "lat-<n>-<CLOCK_MONOTONIC ns when the pacer wrote the request>".
        latencies = timing.sendNanos.withLockedValue { $0 }.compactMap { id, sent in
            id.split(separator: "-").last.flatMap { Int64($0) }.map { Double(sent - $0) / 1e6 }
        }
    } else {
        let starts = webhookStarts.withLockedValue { $0 }
        let sends = timing.sendTimes.withLockedValue { $0 }
        latencies = starts.compactMap { id, start in sends[id].map { ms($0 - start) } }
    }
    if usePacer, env["HERALD_BENCH_TAIL"] != nil {
        // Which events were slow, by when they were sent: periodic stalls show as clusters.
        let sorted = latencies.sorted()
        let slow = timing.sendNanos.withLockedValue { $0 }.compactMap { id, sent -> (Int, Double)? in
            let parts = id.split(separator: "-")
            guard parts.count == 3, let index = Int(parts[1]), let start = Int64(parts[2]) else { return nil }
            return (index, Double(sent - start) / 1e6)
        }.filter { $0.1 > percentile(sorted, 0.98) }.sorted { $0.0 < $1.0 }
        print(slow.map { String(format: "%d:%.0f", $0.0 * 1000 / options.rate, $0.1) }.joined(separator: " "))
    }
    latencies.sort()
    print(
        String(
            format: "3. webhook → APNs request at %d/s for %d s (%@): p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%d of %d measured)",
            options.rate, options.seconds, usePacer ? "pacer process" : "in-process client", percentile(latencies, 0.5),
            percentile(latencies, 0.9), percentile(latencies, 0.99), latencies.last ?? .nan, latencies.count, count))
    print(
        "   " + CPUSample(apnsPID: apnsChild?.processIdentifier).report(since: cpuStart, per: count)
            + (usePacer ? " (load generator: the pacer process)" : " (this process includes the load client)"))
}

if let mockServer {
    let connections = await mockServer.connections.connectionCount
    let streams = await mockServer.connections.maxConcurrentRequestsPerConnection
    print("APNs connections used: \(connections); most concurrent streams on one connection: \(streams)")
}

// MARK: Shutdown.

await serviceGroup.triggerGracefulShutdown()
_ = try? await serverTask.value
try await loadClient.shutdown().get()
await httpClient.shutdown()
if let mock { await mock.stop() }
if let apnsChild {
    try? apnsChildInput.fileHandleForWriting.close()
    apnsChild.waitUntilExit()
}
try? FileManager.default.removeItem(at: folder)
