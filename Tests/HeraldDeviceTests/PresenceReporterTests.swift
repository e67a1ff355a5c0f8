import Foundation
import HeraldTestSupport
import HeraldWire
import Synchronization
import Testing

@testable import HeraldDevice

/// The reporter against a real `herald serve` child process (local development provider).
@Suite("The app reports presence, so a wake reaches it instead of a push")
struct PresenceReporterTests {
    static func reporter(_ server: HeraldServe, _ device: DeviceRegistrationAnswer, mode: PresenceReporter.Mode, secret: String? = nil)
        -> PresenceReporter
    {
        PresenceReporter(
            configuration: .init(
                serverURL: server.baseURL, deviceID: device.deviceID, deviceSecret: secret ?? device.deviceSecret ?? "",
                mode: mode, initialBackoff: .milliseconds(100), maximumBackoff: .milliseconds(400), requestTimeout: .seconds(5)))
    }

    /// A server, a registered device, its started reporter and the reporter's events; with
    /// `awaitPresent`, once the server counts the app as present.
    static func start(mode: PresenceReporter.Mode, secret: String? = nil, awaitPresent: Bool = true) async throws
        -> (HeraldServe, DeviceRegistrationAnswer, PresenceReporter, EventRecorder)
    {
        let server = try await HeraldServe.start()
        let device = try await server.registerDevice()
        let reporter = reporter(server, device, mode: mode, secret: secret)
        let events = EventRecorder(reporter)
        await reporter.start()
        if awaitPresent {
            try #require(await events.next { $0.isPresent } != nil)
        }
        return (server, device, reporter, events)
    }

    @Test("heartbeats make a wake answer present; after stop the next wake pushes")
    func heartbeatThenStop() async throws {
        let (server, device, reporter, events) = try await Self.start(mode: .heartbeat(ttlSeconds: 30))

        let (status, answer) = try await server.wake(device.deviceID, paymentHash: "aa01")
        #expect(status == 200)
        #expect(answer == WakeAnswer(pushed: false, reason: .present))

        await reporter.stop()
        #expect(await events.next { $0 == .stopped(nil) } != nil)
        #expect(await reporter.isRunning == false)
        // The DELETE ended presence at once, not after the 30 s TTL.
        let (after, pushed) = try await server.wake(device.deviceID, paymentHash: "aa02")
        #expect(after == 202)
        #expect(pushed?.pushed == true)
        #expect(pushed?.jobIDs?.count == 1)
    }

    @Test("heartbeats repeat at half the TTL on the reporter's clock, each one accepted, so the app stays present past one TTL")
    func heartbeatsRepeat() async throws {
        let server = try await HeraldServe.start()
        let device = try await server.registerDevice()
        let clock = ManualClock()
        let transport = CountingPresenceTransport()
        let reporter = PresenceReporter(
            configuration: .init(
                serverURL: server.baseURL, deviceID: device.deviceID, deviceSecret: device.deviceSecret ?? "",
                mode: .heartbeat(ttlSeconds: 30), initialBackoff: .milliseconds(100), maximumBackoff: .milliseconds(400),
                requestTimeout: .seconds(5)),
            transport: transport, clock: DeviceClock(clock))
        let events = EventRecorder(reporter)
        await reporter.start()
        try #require(await events.next { $0.isPresent } != nil)
        // Time moves only on the reporter's clock: 45 s of it, past the 30 s TTL. The server renews
        // presence for the TTL from each beat it accepts (PresenceRegistryTests), so each beat
        // must come within half of it.
        for beat in 2...4 {
            // Asleep after the last beat, which the server accepted.
            #expect(await eventually { clock.sleepers == 1 && transport.beats == (sent: beat - 1, accepted: beat - 1) })
            clock.advance(by: .milliseconds(14_999))
            // Not due yet: a wake would have taken the sleeper off the clock at once.
            #expect(clock.sleepers == 1 && transport.beats.sent == beat - 1)
            clock.advance(by: .milliseconds(1))
            #expect(await eventually { transport.beats == (sent: beat, accepted: beat) })
        }
        let (status, answer) = try await server.wake(device.deviceID, paymentHash: "dd01")
        #expect(status == 200)
        #expect(answer?.reason == .present)
        await reporter.stop()
    }

    @Test("stream mode: the app is present while it holds the stream and receives the wake on it")
    func streamReceivesWake() async throws {
        let (server, device, reporter, events) = try await Self.start(mode: .stream)

        let (status, answer) = try await server.wake(device.deviceID, paymentHash: "bb01")
        #expect(status == 200)
        #expect(answer?.reason == .present)
        let wake = await events.next { $0.wakeEvent != nil }?.wakeEvent
        #expect(wake == PresenceWakeEvent(kind: .incomingHtlc, paymentHash: "bb01", amountMsat: 1000))

        await reporter.stop()
        let (after, _) = try await server.wake(device.deviceID, paymentHash: "bb02")
        #expect(after == 202)
    }

    @Test("a server killed with -9 and restarted: the stream reconnects and wakes arrive again")
    func streamReconnects() async throws {
        let (server, device, reporter, events) = try await Self.start(mode: .stream)
        let before = await events.count

        try await server.crashAndRestart()
        #expect(await events.next(after: before) { $0.isDisconnected } != nil)
        #expect(await events.next(after: before) { $0.isPresent } != nil)

        let (status, answer) = try await server.wake(device.deviceID, paymentHash: "cc01")
        #expect(status == 200)
        #expect(answer?.reason == .present)
        #expect(await events.next { $0.wakeEvent?.paymentHash == "cc01" } != nil)
        await reporter.stop()
    }

    @Test(
        "a wrong device secret stops the reporter with unauthorized; it is not retried",
        arguments: [
            PresenceReporter.Mode.heartbeat(ttlSeconds: 30), .stream,
        ])
    func wrongSecret(mode: PresenceReporter.Mode) async throws {
        let (server, _, reporter, events) = try await Self.start(mode: mode, secret: "not-the-secret", awaitPresent: false)
        let stopped = await events.next { $0.isStopped }
        guard case .stopped(let error?) = stopped else {
            Issue.record("expected a stop with an error, got \(String(describing: stopped))")
            return
        }
        #expect(error.code == .unauthorized)
        #expect(error.status == 401)
        #expect(await reporter.isRunning == false)
        #expect(await events.events.contains { $0.isDisconnected || $0.isPresent } == false)
        withExtendedLifetime(server) {}
    }

    @Test("a TTL the server refuses stops the reporter with its error code")
    func invalidTTL() async throws {
        let (server, _, _, events) = try await Self.start(mode: .heartbeat(ttlSeconds: 301), awaitPresent: false)
        let stopped = await events.next { $0.isStopped }
        guard case .stopped(let error?) = stopped else {
            Issue.record("expected a stop with an error")
            return
        }
        #expect(error.code == .rejected)
        #expect(error.serverError == "invalid_ttl")
        withExtendedLifetime(server) {}
    }
}

/// The real transport, counting the heartbeats sent and those the server accepted (2xx).
final class CountingPresenceTransport: PresenceTransport {
    private let inner = URLSessionPresenceTransport()
    private let counts = Mutex((sent: 0, accepted: 0))

    var beats: (sent: Int, accepted: Int) { counts.withLock { $0 } }

    func send(_ request: PresenceHTTPRequest, timeout: Duration) async throws -> PresenceHTTPResponse {
        let beat = request.method == "POST"
        if beat { counts.withLock { $0.sent += 1 } }
        let response = try await inner.send(request, timeout: timeout)
        if beat, (200..<300).contains(response.status) { counts.withLock { $0.accepted += 1 } }
        return response
    }

    func stream(_ request: PresenceHTTPRequest, idleTimeout: Duration) -> AsyncThrowingStream<PresenceStreamPart, any Error> {
        inner.stream(request, idleTimeout: idleTimeout)
    }
}
