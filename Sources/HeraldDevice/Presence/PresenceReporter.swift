import Foundation
import HeraldWire

/// Tells Herald that the app is in the foreground, so that a wake reaches the running app instead
/// of becoming a push: the server must not push while the app is connected, and a
/// foreground app that gets a push competes with its own extension for the payment.
///
/// Run it from the app (or an extension) while it is active: `start()` when it comes to the
/// foreground, `stop()` when it leaves. It reports on ``events``: `.present` whenever the server
/// counts the app as present again, each wake delivered on the stream, lost connections and the end.
public actor PresenceReporter {
    /// How presence is reported.
    public enum Mode: Sendable, Hashable {
        /// `POST …/presence` every `ttlSeconds / 2`: the server forgets the app `ttlSeconds` after
        /// the last one, so a killed app stops being present on its own. Wakes are not delivered.
        case heartbeat(ttlSeconds: Int)
        /// Hold `GET …/presence/stream`: present while it is open, and wakes arrive on it as events.
        case stream
    }

    /// What the reporter tells the app.
    public enum Event: Sendable, Hashable {
        /// The server counts the app as present (a heartbeat was accepted or the stream is open).
        case present
        /// A wake the server sent on the stream instead of a push.
        case wake(PresenceWakeEvent)
        /// Presence was lost (network, server restart); the reporter tries again after the delay.
        case disconnected(retryIn: Duration)
        /// The reporter stopped: after ``stop()`` (nil) or for an error retrying cannot fix.
        case stopped(PresenceError?)
    }

    public struct Configuration: Sendable {
        /// Herald's base URL, e.g. `https://nds.example.com`.
        public var serverURL: URL
        public var deviceID: String
        /// The `device_secret` from registration.
        public var deviceSecret: String
        public var mode: Mode
        /// Waits between reconnection attempts: doubled from `initial` up to `maximum`, each drawn
        /// between half and all of it so that many apps cut off together do not return together.
        public var initialBackoff: Duration
        public var maximumBackoff: Duration
        /// The longest one heartbeat or `DELETE` may take.
        public var requestTimeout: Duration
        /// A stream silent this long is dead; the server sends a keep-alive every 15 s.
        public var streamIdleTimeout: Duration

        public init(
            serverURL: URL, deviceID: String, deviceSecret: String, mode: Mode = .stream,
            initialBackoff: Duration = .milliseconds(500), maximumBackoff: Duration = .seconds(15),
            requestTimeout: Duration = .seconds(10), streamIdleTimeout: Duration = .seconds(45)
        ) {
            self.serverURL = serverURL
            self.deviceID = deviceID
            self.deviceSecret = deviceSecret
            self.mode = mode
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.requestTimeout = requestTimeout
            self.streamIdleTimeout = streamIdleTimeout
        }
    }

    /// Everything the reporter has to say, in order. Only the newest events are kept for a reader
    /// that falls behind, so an app that never reads costs a few bytes, not a growing queue.
    public nonisolated let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let session: PresenceSession
    private var task: Task<PresenceError?, Never>?

    public init(
        configuration: Configuration,
        transport: any PresenceTransport = URLSessionPresenceTransport(),
        clock: DeviceClock = .continuous,
        log: DeviceLog = .none
    ) {
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(32))
        session = PresenceSession(configuration: configuration, transport: transport, clock: clock, log: log, emit: continuation)
    }

    deinit {
        task?.cancel()
        continuation.finish()
    }

    /// Whether reporting is under way (false before `start()`, after `stop()` and after a fatal error).
    public var isRunning: Bool { task != nil }

    /// Starts reporting; does nothing if already started.
    public func start() {
        guard task == nil else { return }
        let session = self.session
        task = Task {
            let error = await session.run()
            self.ended(error)
            return error
        }
    }

    /// Stops reporting and tells the server the app is gone (`DELETE …/presence`), so the next wake
    /// pushes at once instead of waiting out a TTL.
    public func stop() async {
        guard let task else { return }
        task.cancel()
        let error = await task.value
        self.task = nil
        if error == nil {
            await session.withdraw()
            continuation.yield(.stopped(nil))
        }
    }

    private func ended(_ error: PresenceError?) {
        // Only a fatal error ends the loop on its own; `stop()` reports its own ending.
        guard let error else { return }
        task = nil
        continuation.yield(.stopped(error))
    }
}

/// Presence was refused for a reason that retrying cannot fix.
public struct PresenceError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        /// 401/403: the device secret is wrong or revoked. Never retried: it would be forever.
        public static let unauthorized: Code = "unauthorized"
        /// 404: the server does not know the device (registration lost).
        public static let unknownDevice: Code = "unknown_device"
        /// Another 4xx, e.g. `invalid_ttl`: the request itself is wrong.
        public static let rejected: Code = "rejected"
    }

    public var code: Code
    public var status: Int
    /// The server's `error` field, when it sent one.
    public var serverError: String?

    public init(code: Code, status: Int, serverError: String? = nil) {
        self.code = code
        self.status = status
        self.serverError = serverError
    }

    public var description: String { "presence \(code.rawValue) (HTTP \(status)\(serverError.map { ", \($0)" } ?? ""))" }

    /// The error for a status that ends reporting, or nil for one worth retrying (408, 429, 5xx).
    static func fatal(status: Int, body: Data) -> PresenceError? {
        let serverError = (try? WireJSON.decode(ErrorBody.self, from: body))?.error
        switch status {
        case 401, 403: return PresenceError(code: .unauthorized, status: status, serverError: serverError)
        case 404: return PresenceError(code: .unknownDevice, status: status, serverError: serverError)
        case 408, 425, 429: return nil
        case 400..<500: return PresenceError(code: .rejected, status: status, serverError: serverError)
        default: return nil
        }
    }

    private struct ErrorBody: Decodable { var error: String? }
}
