// `herald-instructions PORT DATABASE`: `herald serve`'s application (SQLite, local development
// provider, default settings) behind a synchronous `main`, for `Benchmarks/instructions.py`.
// `herald-instructions PORT --bare-route`: a bare Hummingbird POST route at the webhook's path
// instead, that collects the body and answers a short JSON object: the framework's own share of
// a request, counted the same way.
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

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write("usage: herald-instructions PORT (DATABASE | --bare-route)\n".data(using: .utf8)!)
    exit(2)
}
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        var logger = Logger(label: "herald")
        logger.logLevel = .warning
        if arguments[2] == "--bare-route" {
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
