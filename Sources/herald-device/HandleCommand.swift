import Foundation
import HeraldDevice

/// `herald-device handle <push.json|->`: runs the plugin on one push, as an extension would.
enum HandleCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        guard let path = arguments.positional.dropFirst().first else { throw UsageError("handle needs a push file (or - for standard input)") }
        let json = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
        let environment = try DeviceEnvironment(arguments)
        let result = try await environment.plugin().handle(json: json)
        printJSON(HandleOutput(result))
        return 0
    }
}
