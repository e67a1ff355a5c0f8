import Crypto
import Foundation

/// Opens Web Push bodies with PyPI's `http_ece` (the library pywebpush and most Python receivers
/// use), in a `python3` child process: a reading of RFC 8291 that shares no code with Herald's,
/// so a message both open is one any receiver opens. `pip install http_ece` makes it available.
public enum HTTPECEReceiver {
    /// Whether `python3` imports `http_ece` here (a trait condition: `.enabled { await HTTPECEReceiver.isAvailable() }`).
    public static func isAvailable() async -> Bool {
        (try? await run(["-c", "import http_ece"], input: Data())) != nil
    }

    /// The plaintext of an `aes128gcm` body sent to the subscription whose private key and auth
    /// secret are given.
    public static func decrypt(_ body: Data, privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) async throws -> Data {
        let script = """
            import sys, http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            key = ec.derive_private_key(int(sys.argv[1], 16), ec.SECP256R1())
            body = open(sys.argv[3], "rb").read()
            sys.stdout.buffer.write(http_ece.decrypt(body, private_key=key, auth_secret=bytes.fromhex(sys.argv[2]), version="aes128gcm"))
            """
        return try await run(["-c", script, hex(privateKey.rawRepresentation), hex(authSecret)], input: body)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// Runs `python3` with `arguments` and, last, the path of a file holding `input`, through
    /// ``ProgramRun`` (no thread held while it runs); its standard output, or ``Failure`` with its
    /// standard error when it exits non-zero. Both go to files: nothing waits on a full pipe.
    static func run(_ arguments: [String], input: Data) async throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-http-ece-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (inputFile, outputFile, errorFile) = (
            folder.appendingPathComponent("in"), folder.appendingPathComponent("out"), folder.appendingPathComponent("err")
        )
        try input.write(to: inputFile)
        for file in [outputFile, errorFile] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorFile)
        let status = try await ProgramRun.status(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments + [inputFile.path], standardOutput: output, standardError: errors)
        try? output.close()
        try? errors.close()
        guard status == 0 else {
            throw Failure(description: "python3 exited \(status): \((try? String(contentsOf: errorFile, encoding: .utf8)) ?? "")")
        }
        return try Data(contentsOf: outputFile)
    }
}
