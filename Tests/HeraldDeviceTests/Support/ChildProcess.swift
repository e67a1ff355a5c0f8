import Foundation
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A `herald-device` process started by a test, with its standard output read line by line.
final class ChildProcess {
    let process = Process()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    /// - Parameters:
    ///   - environment: Variables set for the child beside this process's own.
    ///   - mergingStandardError: Whether its standard error comes in the same lines as its output.
    init(arguments: [String], environment: [String: String] = [:], mergingStandardError: Bool = false) throws {
        process.executableURL = try HeraldServeProcess.binary("herald-device")
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = output
        if mergingStandardError { process.standardError = output }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let fd = output.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// The next line of output within `timeout`, or `nil`.
    func nextLine(within timeout: Duration) async -> String? {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        let fd = output.fileHandleForReading.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                continue
            }
            if count == 0 || clock.now >= end { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
