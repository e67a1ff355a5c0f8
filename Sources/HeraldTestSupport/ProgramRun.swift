import Foundation

/// A program run to its end without holding a thread: the exit arrives as a callback, so tests
/// and test servers can start tools (`herald`, `initdb`, `chown`) from async code.
public enum ProgramRun {
    /// Runs `executable` with `arguments` and the given standard output and error; its exit status.
    public static func status(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
        standardOutput: Any = FileHandle.nullDevice, standardError: Any = FileHandle.nullDevice
    ) async throws -> Int32 {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput
        process.standardError = standardError
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }

    /// Runs a program whose output is small (a key, a list, a summary) and returns its exit status
    /// and standard output, with standard error too when `includeStandardError`. The output is read
    /// after the exit, so it must fit in the pipe's buffer: fine for these, not for a chatty program.
    public static func output(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, includeStandardError: Bool = false
    ) async throws -> (status: Int32, output: String) {
        let pipe = Pipe()
        let status = try await status(
            executable, arguments, environment: environment, standardOutput: pipe,
            standardError: includeStandardError ? pipe : FileHandle.nullDevice
        )
        try? pipe.fileHandleForWriting.close()
        return (status, String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}
