import ArgumentParser
import Foundation
import HeraldWire

/// Where a `keygen` command writes a new key: owner-only, and never over a key already in use
/// unless told so, because everything made with the old key stops working.
struct KeyFileOptions: ParsableArguments {
    @Option(help: "Where to write the key.")
    var out: String

    @Flag(help: "Replace an existing file.")
    var force = false

    /// Writes `contents`, prints `publicKey` (for scripts) and says on stderr what it is.
    /// - Parameter replacing: What replacing an existing key would break, for the refusal.
    func write(_ contents: String, publicKey: String, named name: String, replacing consequence: String) throws {
        if !force, FileManager.default.fileExists(atPath: out) {
            throw ValidationError("\(out) exists; pass --force to replace it (\(consequence))")
        }
        let folder = URL(fileURLWithPath: out).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("folder \(folder) does not exist; create it (mkdir -p \(folder)) or choose another --out")
        }
        try OwnerOnlyFile.write(Data(contents.utf8), to: URL(fileURLWithPath: out))
        print(publicKey)
        FileHandle.standardError.write(Data("wrote \(out); the line above is its public key (\(name))\n".utf8))
    }
}
