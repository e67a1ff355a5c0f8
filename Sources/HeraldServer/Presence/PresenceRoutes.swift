import Foundation
import HTTPTypes
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `/api/v1/devices/{id}/presence`: a running app says it is in the foreground, so wakes for it
/// are not pushed (a connected app hears of the wake directly; a push would only compete with it). Authenticated with the
/// device secret, like the other device routes.
struct PresenceRoutes: Sendable {
    let devices: any DeviceStore
    let presence: PresenceRegistry
    let settings: ServerSettings
    let now: @Sendable () -> Date
    /// Paces the keep-alive lines.
    let clock: any Clock<Duration>
    /// Records the device's acks of its wakes.
    var wakes: WakeService? = nil

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("devices/:id/acks") { request, context in try await acknowledge(request, context: context) }
        router.post("devices/:id/presence") { request, context in try await heartbeat(request, context: context) }
        router.delete("devices/:id/presence") { request, context in try await leave(request, context: context) }
        router.get("devices/:id/presence/stream") { request, context in try await stream(request, context: context) }
    }

    func heartbeat(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        var request = request
        let body = try await Edge.readOptionalJSONBody(PresenceHeartbeat.self, from: &request)
        let ttl = body?.ttlSeconds ?? PresenceHeartbeat.defaultTTL
        guard (1...PresenceHeartbeat.maximumTTL).contains(ttl) else {
            throw APIError(.invalidTTL, "ttl_seconds must be 1 to \(PresenceHeartbeat.maximumTTL)")
        }
        presence.heartbeat(deviceID: device.id, ttl: TimeInterval(ttl), now: now())
        return try JSONResponse.make(PresenceAnswer(present: true, ttlSeconds: ttl))
    }

    /// `POST /api/v1/devices/{id}/acks`: the plugin says what became of a wake (its `wake_id`
    /// data key); `GET /api/v1/wake/{wake_id}` shows it to the waker.
    func acknowledge(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        var request = request
        let ack = try await Edge.readJSONBody(WakeAck.self, from: &request)
        guard let id = UUID(uuidString: ack.id),
            try await wakes?.acknowledge(wakeID: id.uuidString.lowercased(), deviceID: device.id, outcome: ack.outcome) != nil
        else {
            throw APIError(.unknownWake, "no wake with this id was pushed to this device")
        }
        return Response(status: .noContent)
    }

    func leave(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        presence.leave(deviceID: device.id)
        return Response(status: .noContent)
    }

    /// Server-sent events: present while the connection is held. Each wake is an `event: wake`
    /// whose data is a ``PresenceWakeEvent``; a comment line every keep-alive interval stops
    /// proxies from timing the stream out and finds a dead connection.
    func stream(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let device = try await authenticate(request, context: context)
        let presence = self.presence
        let keepAlive = settings.presenceKeepAlive
        let maxAge = presence.configuration.maxStreamAge.timeInterval
        let now = self.now
        let clock = self.clock
        // Opened before the answer starts, so a full server says so with a status.
        guard let (id, events) = presence.openStream(deviceID: device.id, now: now()) else {
            throw APIError(
                .tooManyStreams, "the server holds its share of presence streams; send heartbeats instead",
                headers: [.retryAfter: "60"])
        }
        let opened = now()
        let body = ResponseBody { writer in
            defer { presence.closeStream(deviceID: device.id, id: id) }
            let (chunks, output) = AsyncStream.makeStream(of: ByteBuffer.self)
            try await withGracefulShutdownHandler {
                try await request.body.consumeWithInboundCloseHandler { _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await event in events { output.yield(Self.frame(event)) }
                            output.finish()
                        }
                        group.addTask {
                            while true {
                                try await clock.sleep(for: keepAlive)
                                // Ended after its maximum age: the reporter reconnects, and a
                                // stream nobody reads any more cannot hold its connection for ever.
                                guard now().timeIntervalSince(opened) < maxAge else {
                                    output.finish()
                                    return
                                }
                                output.yield(ByteBuffer(string: ": keep-alive\n\n"))
                                presence.renewStream(deviceID: device.id, now: now())
                            }
                        }
                        try await writer.write(ByteBuffer(string: ": connected\n\n"))
                        for await chunk in chunks { try await writer.write(chunk) }
                        group.cancelAll()
                    }
                } onInboundClosed: {
                    presence.closeStream(deviceID: device.id, id: id)
                }
            } onGracefulShutdown: {
                presence.closeStream(deviceID: device.id, id: id)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            // A stream the server ends (a newer one, its age) also frees its connection.
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .connection: "close"],
            body: body
        )
    }

    static func frame(_ event: PresenceWakeEvent) -> ByteBuffer {
        // WireJSON writes one line (no pretty printing), as an SSE `data:` field needs.
        let json = (try? WireJSON.encodeString(event)) ?? "{}"
        return ByteBuffer(string: "event: wake\ndata: \(json)\n\n")
    }

    func authenticate(_ request: Request, context: HeraldRequestContext) async throws -> Device {
        try await DeviceRoutes.authenticate(request, context: context, in: devices)
    }
}
