import Crypto
import Foundation

/// Opens Web Push bodies with PyPI's `http_ece` (the library pywebpush and most Python receivers
/// use), in a `python3` child process: a reading of RFC 8291 that shares no code with Herald's,
/// so a message both open is one any receiver opens. `pip install http_ece` makes it available.
public enum HTTPECEReceiver {
    /// Whether `python3` imports `http_ece` here; asked once.
    public static let isAvailable: Bool = (try? run(["-c", "import http_ece"], input: Data())) != nil

    /// The plaintext of an `aes128gcm` body sent to the subscription whose private key and auth
    /// secret are given.
    public static func decrypt(_ body: Data, privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) throws -> Data {
        let script = """
            import sys, http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            key = ec.derive_private_key(int(sys.argv[1], 16), ec.SECP256R1())
            body = sys.stdin.buffer.read()
            sys.stdout.buffer.write(http_ece.decrypt(body, private_key=key, auth_secret=bytes.fromhex(sys.argv[2]), version="aes128gcm"))
            """
        return try run(["-c", script, hex(privateKey.rawRepresentation), hex(authSecret)], input: body)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// Runs `python3` with `arguments`, `input` on its standard input; its standard output, or
    /// ``Failure`` with its standard error when it exits non-zero.
    static func run(_ arguments: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        // Read to the end before waiting: a full pipe would hold the child forever.
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python3 exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
        }
        return output
    }
}
