import Foundation
import Testing

/// docs/ARCHITECTURE.md is where a maintainer finds a thing: it must name every module and every
/// folder, or the map silently stops matching the tree.
@Suite("Architecture document")
struct ArchitectureDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folders directly inside `path` that hold a Swift file somewhere below them.
    static func folders(_ path: String) throws -> [String] {
        let base = root.appendingPathComponent(path)
        return try FileManager.default.contentsOfDirectory(atPath: base.path).sorted().filter { name in
            let folder = base.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else { return false }
            return FileManager.default.enumerator(atPath: folder.path)?.contains { ($0 as? String)?.hasSuffix(".swift") == true } == true
        }
    }

    @Test("every module in Sources/ and every folder of HeraldServer, HeraldPush and HeraldDevice has its line")
    func everyFolderListed() throws {
        let document = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let rows = document.split(separator: "\n").filter { $0.hasPrefix("| `") }
        func listed(_ name: String) -> Bool { rows.contains { $0.hasPrefix("| `\(name)`") } }
        let modules = try Self.folders("Sources")
        #expect(modules.count > 20)
        #expect(modules.filter { !listed($0) } == [], "modules without a line")
        for module in ["HeraldServer", "HeraldPush", "HeraldDevice"] {
            let folders = try Self.folders("Sources/\(module)")
            #expect(!folders.isEmpty)
            #expect(folders.filter { !listed($0 + "/") } == [], "\(module)'s folders without a line")
        }
    }
}
