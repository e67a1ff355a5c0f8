import AsyncHTTPClient
import Foundation
import HeraldSQLite
import HeraldStore
import HeraldTestSupport
import HeraldWire

/// `herald-bench wake`: a fleet of simulated phones and their LSPs against a real `herald serve`,
/// comparing wake strategies by how many payments complete before the sender's hard stop.
enum WakeBench {
    static let topic = "org.herald.wakebench"

    static func run(arguments: [String]) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(WakeBenchOptions.usage)
            return 0
        }
        let options: WakeBenchOptions
        do {
            options = try WakeBenchOptions(arguments: arguments)
        } catch {
            print("\(error)\n\(WakeBenchOptions.usage)")
            return 2
        }
        do {
            try await simulate(options)
            return 0
        } catch {
            print("wake bench failed: \(error)")
            return 1
        }
    }

    /// A push as the APNs look-alike saw it.
    struct SeenPush: Sendable {
        var token: String
        var kind: SimulatedPhone.PushKind
        var expiration: String?
        /// The `wake_id` data key: what the phone acknowledges.
        var wakeID: String?
    }

    /// One run per rule set, each against a fresh server, with the same seed.
    static func simulate(_ options: WakeBenchOptions) async throws {
        for rules in options.rules {
            print("\n## \(rules.label)")
            try await simulate(options, rules: rules)
        }
    }

    static func simulate(_ options: WakeBenchOptions, rules: WakePushRules) async throws {
        let binary =
            options.herald.map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw WakeBenchFailure("no herald binary at \(binary.path) (swift build, or --herald PATH)")
        }

        // The APNs look-alike hands every accepted push to the fleet as it answers it.
        let (pushes, pushSink) = AsyncStream.makeStream(of: SeenPush.self)
        let key = TestKeys.apnsP8()
        let certificate = try TestCertificate.make()
        let apns = MockAPNsServer(key: key, topic: topic, certificate: certificate, recordsRequests: false) { request in
            guard request.accepted else { return }
            let data = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any]
            pushSink.yield(
                SeenPush(
                    token: request.deviceToken, kind: request.headers["apns-push-type"] == "background" ? .silent : .alert,
                    expiration: request.headers["apns-expiration"], wakeID: data?[WakePushKey.wakeID] as? String))
        }
        let running = try await apns.start()

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        do {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-wake-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let database = folder.appendingPathComponent("herald.sqlite").path
            let (fleet, wakeKey) = try await provision(options, database: database)
            let server = try await HeraldServeChild.start(
                binary: binary, folder: folder, database: database, wakeKey: wakeKey,
                apnsURL: running.baseURL, key: key, caFile: try certificate.writeCAToTemporaryFile(), topic: topic)
            do {
                try await runFleet(
                    options, rules: rules, fleet: fleet, server: server, http: FleetHTTP(client: client, baseURL: server.baseURL),
                    apnsURL: running.baseURL, pushes: pushes, pushSink: pushSink)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        } catch {
            try? await client.shutdown()
            await running.stop()
            throw error
        }
        try? await client.shutdown()
        await running.stop()
    }

    /// One phone of the fleet as registered: the payment it receives under one strategy.
    struct FleetDevice: Sendable {
        var strategy: WakeStrategy
        var index: Int
        var token: String
        var device: DeviceRegistrationAnswer
    }

    /// Registers every phone and makes the LSP's `wake` key in the database, before the server
    /// opens it: the registration route allows 30 a minute per address, and what is measured
    /// here is waking, not registering.
    static func provision(_ options: WakeBenchOptions, database: String) async throws -> ([FleetDevice], String) {
        let store = try await SQLiteStore.open(path: database)
        var fleet: [FleetDevice] = []
        for (s, strategy) in options.strategies.enumerated() {
            for i in 0..<options.payments {
                let token = String(format: "%016llx", UInt64(s + 1)) + String(format: "%048llx", UInt64(i))
                let registration = try await store.registerDevice(platform: .ios, token: token, now: Date())
                let device = DeviceRegistrationAnswer(
                    deviceID: registration.device.id, deviceSecret: registration.secret,
                    alias: registration.device.alias, webhookURL: "")
                fleet.append(FleetDevice(strategy: strategy, index: i, token: token, device: device))
            }
        }
        let key = try await store.createAPIKey(name: "wake-bench", scopes: [.wake], now: Date())
        return (fleet, key.secret)
    }

    static func runFleet(
        _ options: WakeBenchOptions, rules: WakePushRules, fleet: [FleetDevice], server: HeraldServeChild, http: FleetHTTP, apnsURL: String,
        pushes: AsyncStream<SeenPush>, pushSink: AsyncStream<SeenPush>.Continuation
    ) async throws {

        // Payment i has the same luck under each strategy.
        struct Payment: Sendable {
            var strategy: WakeStrategy
            var index: Int
            var phone: SimulatedPhone
            var deviceID: String
            var token: String
        }
        let payments = fleet.map {
            Payment(
                strategy: $0.strategy, index: $0.index,
                phone: SimulatedPhone(strategy: $0.strategy, rules: rules, device: $0.device, payment: $0.index, http: http, options: options),
                deviceID: $0.device.deviceID, token: $0.token)
        }
        let phones = Dictionary(uniqueKeysWithValues: payments.map { ($0.token, $0.phone) })
        print("herald-bench wake: \(payments.count) phones registered with herald serve at \(server.baseURL); APNs look-alike at \(apnsURL)")
        print(options.summary)

        let lsp = SimulatedLSP(http: http, wakeKey: server.wakeKey, options: options)
        let serverCPUStart = cpuSeconds(pid: server.process.processIdentifier)
        let benchCPUStart = cpuSeconds()
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: (WakeStrategy, SimulatedLSP.Outcome)?.self) { group in
            // Pushes reach their phones while the payments run.
            group.addTask {
                await withTaskGroup(of: Void.self) { deliveries in
                    for await push in pushes {
                        guard let phone = phones[push.token] else { continue }
                        deliveries.addTask { await phone.receive(push.kind, expiration: push.expiration, wakeID: push.wakeID) }
                    }
                }
                return nil
            }
            for payment in payments {
                var spread = SplitMix64(seed: options.seed, payment: payment.index, purpose: 4)
                let startAfter = spread.uniform(0...options.spread)
                group.addTask {
                    try? await Task.sleep(for: .seconds(startAfter))
                    // The token is unique per payment: it serves as the payment hash too.
                    let outcome = await lsp.pay(
                        phone: payment.phone, deviceID: payment.deviceID, paymentHash: payment.token,
                        payment: payment.index, strategy: payment.strategy)
                    return (payment.strategy, outcome)
                }
            }
            var results: [(WakeStrategy, SimulatedLSP.Outcome)] = []
            for await result in group {
                guard let result else { continue }
                results.append(result)
                if results.count == payments.count {
                    pushSink.finish()
                    group.cancelAll()
                }
            }
            return results
        }
        let elapsed = ContinuousClock.now - started
        let serverCPU = cpuSeconds(pid: server.process.processIdentifier) - serverCPUStart
        let benchCPU = cpuSeconds() - benchCPUStart
        var counts: [WakeStrategy: PhoneCounts] = [:]
        for payment in payments {
            counts[payment.strategy, default: PhoneCounts()] = counts[payment.strategy, default: PhoneCounts()] + (await payment.phone.summary)
        }
        print(report(results: results, counts: counts, options: options, elapsed: elapsed))
        // Everything shares this machine's cores: a saturated CPU shows as push and hint latency.
        print(
            String(
                format: "CPU during the run: herald serve %.1f s, this process (phones, LSPs, APNs look-alike) %.1f s, over %.1f s on %d cores.",
                serverCPU, benchCPU, seconds(elapsed), ProcessInfo.processInfo.activeProcessorCount))
    }

    static func report(
        results: [(WakeStrategy, SimulatedLSP.Outcome)], counts: [WakeStrategy: PhoneCounts], options: WakeBenchOptions, elapsed: Duration
    ) -> String {
        var lines = [
            "",
            "| strategy | payments | completed within \(fmt(options.hardStop)) s | median | p90 | alerts shown | completed without an alert | alerts after completion |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        var notes: [String] = []
        for strategy in options.strategies {
            let outcomes = results.filter { $0.0 == strategy }.map(\.1)
            // Failed payments count as slower than any completed one, so a percentile that falls
            // among them reads "> hard stop".
            let times = outcomes.map { $0.completedAfter.map(seconds) ?? .infinity }.sorted()
            let completed = times.filter(\.isFinite).count
            func quantile(_ q: Double) -> String {
                guard !times.isEmpty else { return "–" }
                let value = times[min(times.count - 1, max(0, Int((Double(times.count) * q).rounded(.up)) - 1))]
                return value.isFinite ? String(format: "%.1f s", value) : "> \(fmt(options.hardStop)) s"
            }
            let c = counts[strategy] ?? PhoneCounts()
            lines.append(
                String(
                    format: "| %@ | %d | %d (%.1f%%) | %@ | %@ | %d | %d | %d |", strategy.label, outcomes.count, completed,
                    100 * Double(completed) / Double(max(1, outcomes.count)), quantile(0.5), quantile(0.9), c.alertsShown,
                    c.completedWithoutAlert, c.alertsAfterTaken))
            let wakes = tally(outcomes.flatMap(\.wakeAnswers))
            let hints = tally(outcomes.flatMap(\.hints))
            let stops = tally(outcomes.compactMap(\.stop))
            let attempts = outcomes.map(\.attempts).reduce(0, +)
            let pushLatency = median(outcomes.compactMap(\.pushAfter))
            let lag = median(outcomes.compactMap(\.attemptLag))
            notes.append(
                "- \(strategy.label): APNs accepted \(c.silentSent) silent + \(c.alertSent) alert pushes; "
                    + "\(c.outOfReach) phones out of reach got \(c.heldAlert) alerts, \(c.heldSilent) silent pushes, \(c.heldNothing) nothing on return; "
                    + "\(c.backgroundWakes) background wakes, \(c.appOpens) apps opened\(c.presenceFailures > 0 ? ", \(c.presenceFailures) presence reports failed" : ""); "
                    + "\(c.acks) acks\(c.ackFailures > 0 ? " (\(c.ackFailures) refused)" : ""); "
                    + "\(attempts) payment attempts; wake answers \(wakes)\(hints.isEmpty ? "" : "; hints \(hints)")"
                    + "\(stops.isEmpty ? "" : "; senders gave up: \(stops)"); "
                    + String(
                        format: "median wake → push at APNs %.0f ms, payable → taken %.0f ms (completed payments)", pushLatency * 1000, lag * 1000))
        }
        lines.append("")
        lines.append("Herald sends both pushes on iOS; \"silent only\" and \"alert only\" are simulated by the phones ignoring the other kind.")
        lines += notes
        lines.append(String(format: "Ran in %.1f s of real time.", seconds(elapsed)))
        return lines.joined(separator: "\n")
    }

    static func median(_ values: [Duration]) -> Double {
        let sorted = values.map(seconds).sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    static func tally(_ labels: [String]) -> String {
        var counts: [String: Int] = [:]
        for label in labels { counts[label, default: 0] += 1 }
        return counts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
}
