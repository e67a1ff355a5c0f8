import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import ServiceLifecycle

/// A mock server that is listening: its port, and the way to stop it.
///
/// Made by the mocks' `start()`. Call ``stop()`` before the test ends; the `withRunning`
/// helpers do it for you.
public final class RunningMockServer: Sendable {
    /// The port it bound on 127.0.0.1.
    public let port: Int
    /// `https://127.0.0.1:<port>` or `http://…` when the mock runs without TLS.
    public let baseURL: String

    private let serviceGroup: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, baseURL: String, serviceGroup: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.baseURL = baseURL
        self.serviceGroup = serviceGroup
        self.task = task
    }

    /// Runs `application` on its own task until ``stop()``, and returns once it listens.
    static func start<App: ApplicationProtocol>(
        _ makeApplication: (_ onServerRunning: @escaping @Sendable (any Channel) async -> Void) throws -> App,
        tls: Bool,
        logger: Logger
    ) async throws -> RunningMockServer {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let application = try makeApplication { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        }
        let serviceGroup = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger)
        )
        // A task of its own (not a child of the caller's) so a bench can keep the server
        // between calls; `stop()` ends it and awaits it, so nothing outlives the test.
        let task = Task {
            defer { portContinuation.finish() }
            try await serviceGroup.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            // The server ended before listening: surface why (a bind error, a TLS setup error).
            try await task.value
            throw MockServerError.didNotStart
        }
        return RunningMockServer(
            port: port,
            baseURL: "\(tls ? "https" : "http")://127.0.0.1:\(port)",
            serviceGroup: serviceGroup,
            task: task
        )
    }

    /// Stops accepting connections, lets open requests finish, and waits until the server is
    /// gone. Cancels it if that takes more than `timeout` (a client holding a connection).
    public func stop(timeout: Duration = .seconds(5)) async {
        await serviceGroup.triggerGracefulShutdown()
        let task = self.task
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = await task.result }
            group.addTask {
                try? await Task.sleep(for: timeout)
                task.cancel()
            }
            await group.next()
            group.cancelAll()
        }
        _ = await task.result
    }
}

extension RunningMockServer {
    /// A mock's router on 127.0.0.1 (a free port), served as `server` says: HTTP/2 and HTTP/1.1
    /// over TLS by ALPN, HTTP/1.1 only over TLS, or plain HTTP/1.1.
    static func start(
        router: Router<MockRequestContext>, server: HTTPServerBuilder, tls: Bool, port: Int = 0, logger: Logger
    ) async throws -> RunningMockServer {
        try await start(
            { onServerRunning in
                Application(
                    router: router,
                    server: server,
                    configuration: .init(address: .hostname("127.0.0.1", port: port)),
                    onServerRunning: onServerRunning,
                    logger: logger
                )
            },
            tls: tls,
            logger: logger
        )
    }
}

/// Runs `body` between `start` and `stop`, stopping however `body` ends: the `withRunning`
/// of every mock.
func withStarted<Server: Sendable, T: Sendable>(
    _ start: () async throws -> Server,
    stop: (Server) async -> Void,
    _ body: (Server) async throws -> T
) async throws -> T {
    let server = try await start()
    do {
        let value = try await body(server)
        await stop(server)
        return value
    } catch {
        await stop(server)
        throw error
    }
}

/// A mock server could not start.
public enum MockServerError: Error, Sendable {
    case didNotStart
}

/// The request context of the mocks: Hummingbird's basic context plus which connection the
/// request came on (the HTTP/2 connection channel, parent of the stream channel).
struct MockRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's channel (for a HTTP/2 stream, its parent).
    let connection: any Channel

    /// The HTTP/2 stream's channel; nil on HTTP/1.
    let stream: (any Channel)?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = source.channel.parent ?? source.channel
        stream = source.channel.parent == nil ? nil : source.channel
    }

    var connectionID: ObjectIdentifier { ObjectIdentifier(connection) }

    /// The HTTP/2 stream id of the request; nil on HTTP/1.
    func streamNumber() async -> Int? {
        guard let stream, let id = try? await stream.getOption(HTTP2StreamChannelOptions.streamID).get() else { return nil }
        return Int(id)
    }
}

extension Request {
    /// The headers by lower-cased name (the last value of a repeated one).
    var headersByName: [String: String] {
        var headers: [String: String] = [:]
        for field in self.headers {
            headers[field.name.canonicalName] = field.value
        }
        return headers
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
func bearerToken(_ authorization: String?) -> String? {
    guard let parts = authorization?.split(separator: " ", maxSplits: 1), parts.count == 2,
        parts[0].lowercased() == "bearer"
    else { return nil }
    return String(parts[1])
}
