// `herald-instructions PORT DATABASE`: `herald serve`'s application (SQLite, local development
// provider, default settings) behind a synchronous `main`, for `Benchmarks/instructions.py`.
// `herald-instructions PORT --bare-route`: a bare Hummingbird POST route at the webhook's path
// instead, that collects the body and answers a short JSON object: the framework's own share of
// a request, counted the same way. `herald-instructions PORT --nio-route`: the same route on
// swift-nio's HTTP/1 pipeline alone (no Hummingbird, no async): what a hand-written HTTP path
// would leave of the framework's share.
//
// Why not `herald serve` itself: valgrind 3.19 (Debian 12's) crashes on any program whose `main`
// is async, in libdispatch's signal thread, before the first instruction of ours. Here the main
// thread only waits (the application is a detached task: top-level code is on the main actor);
// the application runs as it does in `herald serve`.
import Dispatch
import Foundation
import HeraldPush
import HeraldSQLite
import HeraldServer
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write("usage: herald-instructions PORT (DATABASE | --bare-route | --nio-route)\n".data(using: .utf8)!)
    exit(2)
}
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        var logger = Logger(label: "herald")
        logger.logLevel = .warning
        if arguments[2] == "--nio-route" {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(BareRouteHandler())
                    }
                }
                .bind(host: "127.0.0.1", port: port).get()
            try await channel.closeFuture.get()
        } else if arguments[2] == "--bare-route" {
            let router = Router()
            router.post("api/v1/notify") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 65536)
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"id":"\#(body.readableBytes)"}"#)))
            }
            try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
                .runService()
        } else {
            let store = try await SQLiteStore.open(path: arguments[2])
            // As `herald serve` makes it: each push is stored with its outcome.
            let local = LocalDevelopmentProvider()
            let configuration = try HeraldConfiguration(values: ["HERALD_PORT": "\(port)"]).server
            try await buildApplication(configuration: configuration, store: store, providers: PushRouter(both: local), logger: logger)
                .runService()
        }
    } catch {
        FileHandle.standardError.write("herald-instructions: \(error)\n".data(using: .utf8)!)
    }
    finished.signal()
}
finished.wait()

/// The bare route on NIO's HTTP/1 pipeline: collects the body of a POST to the webhook's path and
/// answers the same short JSON object the Hummingbird route does; anything else is a 404.
final class BareRouteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var body: ByteBuffer?
    private var found = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            found = head.method == .POST && head.uri.utf8.starts(with: "/api/v1/notify".utf8)
            body = context.channel.allocator.buffer(capacity: 0)
        case .body(var part):
            body?.writeBuffer(&part)
        case .end:
            let answer = context.channel.allocator.buffer(string: #"{"id":"\#(body?.readableBytes ?? 0)"}"#)
            let headers = HTTPHeaders([("content-type", "application/json"), ("content-length", "\(answer.readableBytes)")])
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(answer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            body = nil
        }
    }
}
