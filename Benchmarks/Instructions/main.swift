// `herald-instructions PORT DATABASE`: `herald serve`'s application (SQLite, local development
// provider, default settings) behind a synchronous `main`, for `Benchmarks/instructions.py`.
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
    FileHandle.standardError.write("usage: herald-instructions PORT DATABASE\n".data(using: .utf8)!)
    exit(2)
}
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        var logger = Logger(label: "herald")
        logger.logLevel = .warning
        let store = try await SQLiteStore.open(path: arguments[2])
        // As `herald serve` makes it: each push is stored with its outcome.
        let local = LocalDevelopmentProvider()
        let configuration = try HeraldConfiguration(values: ["HERALD_PORT": "\(port)"]).server
        try await buildApplication(configuration: configuration, store: store, providers: PushRouter(both: local), logger: logger)
            .runService()
    } catch {
        FileHandle.standardError.write("herald-instructions: \(error)\n".data(using: .utf8)!)
    }
    finished.signal()
}
finished.wait()
