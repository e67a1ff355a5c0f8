import Foundation
import HeraldWire

/// The reporting loop behind ``PresenceReporter``: plain values only, so that it runs in the
/// reporter's task without holding the actor while it waits on the network.
struct PresenceSession: Sendable {
    let configuration: PresenceReporter.Configuration
    let transport: any PresenceTransport
    let clock: DeviceClock
    let log: DeviceLog
    let emit: AsyncStream<PresenceReporter.Event>.Continuation

    /// How one connection (a run of heartbeats, or one held stream) ended.
    enum Ending {
        case cancelled
        case fatal(PresenceError)
        /// Worth another try; `wasPresent` resets the backoff (the server was reachable).
        case lost(reason: String, wasPresent: Bool)
    }

    /// Reports until cancelled (returns nil) or refused for good (returns the error).
    func run() async -> PresenceError? {
        var backoff = configuration.initialBackoff
        while true {
            let ending: Ending
            switch configuration.mode {
            case .heartbeat(let ttl): ending = await heartbeats(ttlSeconds: ttl)
            case .stream: ending = await holdStream()
            }
            switch ending {
            case .cancelled:
                return nil
            case .fatal(let error):
                log(.error, "presence refused", ["code": error.code.rawValue, "status": String(error.status)])
                return error
            case .lost(let reason, let wasPresent):
                if wasPresent { backoff = configuration.initialBackoff }
                // Equal jitter: at least half the backoff, so a dead server is not hammered.
                let half = backoff / 2
                let wait = half + Duration.nanoseconds(Int64.random(in: 0...max(0, Self.nanoseconds(half))))
                log(.warning, "presence lost", ["reason": reason, "retry_ms": String(Self.nanoseconds(wait) / 1_000_000)])
                emit.yield(.disconnected(retryIn: wait))
                do { try await clock.sleep(wait) } catch { return nil }
                backoff = min(backoff * 2, configuration.maximumBackoff)
            }
        }
    }

    /// Heartbeats every half TTL until one fails.
    func heartbeats(ttlSeconds: Int) async -> Ending {
        let body = (try? WireJSON.encode(PresenceHeartbeat(ttlSeconds: ttlSeconds))) ?? Data()
        var request = request(method: "POST", path: "presence", body: body)
        request.headers["Content-Type"] = "application/json"
        var wasPresent = false
        while !Task.isCancelled {
            let response: PresenceHTTPResponse
            do {
                response = try await transport.send(request, timeout: configuration.requestTimeout)
            } catch {
                return Task.isCancelled ? .cancelled : .lost(reason: "\(error)", wasPresent: wasPresent)
            }
            guard (200..<300).contains(response.status) else {
                if let fatal = PresenceError.fatal(status: response.status, body: response.body) { return .fatal(fatal) }
                return .lost(reason: "HTTP \(response.status)", wasPresent: wasPresent)
            }
            if !wasPresent {
                wasPresent = true
                emit.yield(.present)
            }
            // The server may grant less than asked; beat again at half of what it granted.
            let granted = (try? WireJSON.decode(PresenceAnswer.self, from: response.body).ttlSeconds) ?? ttlSeconds
            do { try await clock.sleep(.milliseconds(max(1, granted) * 500)) } catch { return .cancelled }
        }
        return .cancelled
    }

    /// Holds the event stream until it ends or breaks, reporting its wakes.
    func holdStream() async -> Ending {
        let parts = transport.stream(request(method: "GET", path: "presence/stream"), idleTimeout: configuration.streamIdleTimeout)
        var parser = ServerSentEventParser()
        var status: Int?
        var refusal = Data()
        var wasPresent = false
        do {
            for try await part in parts {
                switch part {
                case .status(let code):
                    status = code
                case .bytes(let bytes) where status == 200:
                    for item in parser.feed(bytes) {
                        if !wasPresent {
                            // The server opens with `: connected` once the device counts as present.
                            wasPresent = true
                            emit.yield(.present)
                        }
                        if case .event("wake", let data, _) = item {
                            deliverWake(data)
                        }
                    }
                case .bytes(let bytes):
                    // A refusal's JSON body; kept short, it is only read for its `error` field.
                    if refusal.count < 4096 { refusal.append(bytes.prefix(4096 - refusal.count)) }
                }
            }
        } catch {
            return Task.isCancelled ? .cancelled : .lost(reason: "\(error)", wasPresent: wasPresent)
        }
        if Task.isCancelled { return .cancelled }
        if let status, status != 200 {
            if let fatal = PresenceError.fatal(status: status, body: refusal) { return .fatal(fatal) }
            return .lost(reason: "HTTP \(status)", wasPresent: false)
        }
        return .lost(reason: "stream ended", wasPresent: wasPresent)
    }

    private func deliverWake(_ data: String) {
        do {
            emit.yield(.wake(try WireJSON.decode(PresenceWakeEvent.self, from: Data(data.utf8))))
        } catch {
            log(.warning, "presence wake unreadable", ["data": String(data.prefix(200))])
        }
    }

    /// `DELETE …/presence`, best effort: if it fails the server's TTL or closed stream ends presence.
    func withdraw() async {
        do {
            let response = try await transport.send(request(method: "DELETE", path: "presence"), timeout: configuration.requestTimeout)
            log(.info, "presence withdrawn", ["status": String(response.status)])
        } catch {
            log(.warning, "presence withdraw failed", ["error": "\(error)"])
        }
    }

    func request(method: String, path: String, body: Data? = nil) -> PresenceHTTPRequest {
        let id = configuration.deviceID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? configuration.deviceID
        var base = configuration.serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let url = URL(string: "\(base)/api/v1/devices/\(id)/\(path)") ?? configuration.serverURL
        return PresenceHTTPRequest(method: method, url: url, headers: ["Authorization": "Bearer \(configuration.deviceSecret)"], body: body)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
