import Foundation
import HeraldDevice

/// `herald-device app`: plays the main app for coordination: takes the wallet (waiting for an
/// extension that holds it) and answers pings until terminated. Prints `waiting` and `ready`.
enum AppCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        let environment = try DeviceEnvironment(arguments)
        try environment.makeFolders()
        let coordinator = try POSIXAppExtensionCoordinator(container: environment.container)
        try await coordinator.runAppPresence(
            waitingForExtension: { say("waiting") },
            ready: { say("ready \(coordinator.channelPath)") }
        )
        return 0
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
