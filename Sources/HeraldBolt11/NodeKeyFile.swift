import Foundation
import HeraldSecp256k1

/// A node's secret key in a file of its own: 64 hex digits, readable by its owner only.
///
/// The first process to need it creates it; processes starting at the same moment (the
/// `herald-device` listener and a push handler) agree on one key, because the file appears
/// only by hard-linking a finished temporary file, which fails if another got there first.
public enum NodeKeyFile {
    /// The file name inside a wallet's folder.
    public static let fileName = "node-key"

    /// Why the key file could not be used.
    public struct Unreadable: Error, CustomStringConvertible {
        public let path: String
        public var description: String { "\(path) does not hold a secp256k1 secret key as 64 hex digits" }
    }

    /// The key in `folder`, created there (with the folder) if there is none yet.
    public static func loadOrCreate(in folder: URL) throws -> NodeSecretKey {
        let url = folder.appendingPathComponent(fileName)
        if let key = try load(url) { return key }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".\(fileName).\(UUID().uuidString)")
        let created = FileManager.default.createFile(
            atPath: temporary.path, contents: Data((NodeSecretKey.random().secretHex + "\n").utf8),
            attributes: [.posixPermissions: 0o600]
        )
        guard created else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path]) }
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            try FileManager.default.linkItem(at: temporary, to: url)
        } catch  where FileManager.default.fileExists(atPath: url.path) {
            // Another process created it meanwhile: use theirs.
        }
        guard let key = try load(url) else { throw Unreadable(path: url.path) }
        return key
    }

    /// The key at `url`; nil if there is no file.
    static func load(_ url: URL) throws -> NodeSecretKey? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let key = NodeSecretKey(hex: text) else { throw Unreadable(path: url.path) }
        return key
    }
}
