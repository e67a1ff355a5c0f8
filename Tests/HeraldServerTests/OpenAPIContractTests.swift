import Foundation
import HeraldServer
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// The served OpenAPI document against the router that serves it, both ways, and against
/// ``ErrorCode``: a route added, renamed or removed, or a code added, fails here, not only in CI's
/// Python.
@Suite("the OpenAPI document and the router")
struct OpenAPIContractTests {
    /// The routes the router registered and the document it serves.
    static func served() async throws -> (routes: Set<String>, document: [String: Any]) {
        let nds = try TestNDS()
        let registered = Mutex<[RegisteredRoute]>([])
        let app = buildApplication(
            configuration: HeraldServerConfiguration(host: "127.0.0.1", port: 0, settings: nds.settings),
            store: nds.store, providers: nds.localRouter(), logger: nds.logger,
            routesRegistered: { routes in registered.withLock { $0 = routes } }
        )
        let document = try await app.test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            return try #require(JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        }
        return (Set(registered.withLock { $0 }.map(\.description)), document)
    }

    static func operations(_ document: [String: Any]) -> [(route: String, operation: [String: Any])] {
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        return paths.flatMap { path, item in
            item.compactMap { method, operation in
                (operation as? [String: Any]).map { ("\(method.uppercased()) \(path)", $0) }
            }
        }
    }

    /// Every `error` code an operation's responses name, with the status they are under.
    static func documentedCodes(_ document: [String: Any]) -> [(code: String, status: Int, route: String)] {
        let shared = (document["components"] as? [String: Any])?["responses"] as? [String: [String: Any]] ?? [:]
        var found: [(String, Int, String)] = []
        for (route, operation) in operations(document) {
            for case (let status, let response as [String: Any]) in operation["responses"] as? [String: Any] ?? [:] {
                guard let code = Int(status), code >= 400 else { continue }
                var resolved = response
                if let reference = response["$ref"] as? String {
                    resolved = shared[String(reference.split(separator: "/").last ?? "")] ?? [:]
                }
                for name in enumerated(resolved) { found.append((name, code, route)) }
            }
        }
        return found
    }

    /// The strings of every `enum` under an `error` property, wherever it is nested.
    static func enumerated(_ value: Any, underError: Bool = false) -> [String] {
        if let object = value as? [String: Any] {
            var names: [String] = []
            for (key, inner) in object {
                if key == "enum", underError, let list = inner as? [String] { names += list }
                names += enumerated(inner, underError: key == "error" || (underError && key != "properties"))
            }
            return names
        }
        if let list = value as? [Any] { return list.flatMap { enumerated($0, underError: underError) } }
        return []
    }

    @Test("every registered method and path is documented, and every documented operation is registered")
    func routesBothWays() async throws {
        let (routes, document) = try await Self.served()
        let documented = Set(Self.operations(document).map(\.route))
        #expect(routes.count > 40)
        #expect(routes.subtracting(documented).sorted() == [], "registered but not documented")
        #expect(documented.subtracting(routes).sorted() == [], "documented but not registered")
    }

    @Test("every error code is documented under its status, and the document names no other code")
    func codesBothWays() async throws {
        let (_, document) = try await Self.served()
        let found = Self.documentedCodes(document)
        let known = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { ($0.rawValue, $0) })
        #expect(Set(found.map(\.code)) == Set(known.keys), "codes the document and ErrorCode do not share")
        for (name, status, route) in found {
            guard let code = known[name] else { continue }
            #expect(code.status.code == status, "\(route) documents \(name) under \(status), not \(code.status.code)")
        }
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let listed = (schemas?["ErrorCode"] as? [String: Any])?["enum"] as? [String]
        #expect(listed == ErrorCode.allCases.map(\.rawValue), "the ErrorCode schema is ErrorCode's cases, in order")
    }

    @Test("every status and code the docs show together (tables, `401 stale_timestamp`, example answers) is the code's status")
    func docsAgree() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let docs =
            try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" } + ["README.md"]
        let known = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { ($0.rawValue, $0.status.code) })
        let tableRow = /^\|\s*(\d{3})\s*\|([^|]+)\|/
        let inline = /`(\d{3}) ([a-z][a-z_]+)`/
        let answer = /# (\d{3}) \{"error":"([a-z_]+)"/
        let code = /`([a-z_]+)`/
        var checked = 0
        for name in docs.sorted() {
            let text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                var pairs: [(Int, String)] = []
                if let row = line.firstMatch(of: tableRow) {
                    pairs += row.output.2.matches(of: code).map { (Int(row.output.1)!, String($0.output.1)) }
                }
                pairs += line.matches(of: inline).map { (Int($0.output.1)!, String($0.output.2)) }
                pairs += line.matches(of: answer).map { (Int($0.output.1)!, String($0.output.2)) }
                for (status, written) in pairs {
                    checked += 1
                    #expect(
                        known[written] == status,
                        "\(name):\(number + 1): \(status) \(written), but ErrorCode says \(known[written].map(String.init) ?? "no such code")")
                }
            }
        }
        #expect(checked > 50)
    }
}
