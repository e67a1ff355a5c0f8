import AsyncHTTPClient
import Foundation
import HTTPTypes
import HeraldServer
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import HeraldServer

/// Who sent a request, behind a reverse proxy or not: the one answer every per-address rule reads.
@Suite("Client address")
struct ClientAddressTests {
    static func resolver(_ trusted: String) throws -> ClientAddressResolver {
        ClientAddressResolver(trusted: try TrustedProxies(parsing: trusted))
    }

    static func resolve(
        _ trusted: String, peer: String, _ headers: [(String, String)]
    ) throws -> (address: String?, scheme: String?) {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let resolved = try resolver(trusted).resolve(peer: try SocketAddress(ipAddress: peer, port: 40_000), headers: fields)
        return (resolved.address?.description, resolved.scheme)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var trusted = "127.0.0.1, 10.0.0.0/8, ::1"
        var peer = "127.0.0.1"
        var headers: [(String, String)]
        var client: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        .init(name: "no header: the peer", headers: [], client: "127.0.0.1"),
        .init(name: "one proxy", headers: [("X-Forwarded-For", "203.0.113.7")], client: "203.0.113.7"),
        .init(
            name: "a chain: the rightmost address that is not a trusted proxy",
            headers: [("X-Forwarded-For", "198.51.100.1, 203.0.113.7, 10.0.0.2")], client: "203.0.113.7"),
        .init(
            name: "what the client wrote itself is left of what nginx appended",
            headers: [("X-Forwarded-For", "127.0.0.99,203.0.113.7")], client: "203.0.113.7"),
        .init(
            name: "garbage the client wrote is never read", headers: [("X-Forwarded-For", "not an address, 203.0.113.7")],
            client: "203.0.113.7"),
        .init(name: "every hop trusted: the first of them", headers: [("X-Forwarded-For", "10.0.0.3, 10.0.0.2")], client: "10.0.0.3"),
        .init(
            name: "two header lines are one list", headers: [("X-Forwarded-For", "203.0.113.9"), ("X-Forwarded-For", "10.0.0.2")],
            client: "203.0.113.9"),
        .init(name: "an address with a port", headers: [("X-Forwarded-For", "203.0.113.7:4711")], client: "203.0.113.7"),
        .init(name: "IPv6 bare", headers: [("X-Forwarded-For", "2001:db8::1")], client: "2001:db8::1"),
        .init(name: "IPv6 in brackets with a port", headers: [("X-Forwarded-For", "[2001:DB8::1]:80")], client: "2001:db8::1"),
        .init(name: "an IPv4-mapped IPv6 address is its IPv4", headers: [("X-Forwarded-For", "::ffff:203.0.113.7")], client: "203.0.113.7"),
        .init(name: "garbage: the peer", headers: [("X-Forwarded-For", "garbage")], client: "127.0.0.1"),
        .init(name: "empty: the peer", headers: [("X-Forwarded-For", "")], client: "127.0.0.1"),
        .init(name: "an empty hop: the peer", headers: [("X-Forwarded-For", "203.0.113.7,,10.0.0.2")], client: "127.0.0.1"),
        .init(name: "a port that is no number: the peer", headers: [("X-Forwarded-For", "203.0.113.7:http")], client: "127.0.0.1"),
        .init(
            name: "100 hops: the peer",
            headers: [("X-Forwarded-For", (0..<100).map { "198.51.100.\($0)" }.joined(separator: ", "))], client: "127.0.0.1"),
        .init(
            name: "untrusted peer: the header is ignored", peer: "192.0.2.44", headers: [("X-Forwarded-For", "203.0.113.7")],
            client: "192.0.2.44"),
        .init(
            name: "no trusted proxies (the default): the header is ignored", trusted: "", headers: [("X-Forwarded-For", "203.0.113.7")],
            client: "127.0.0.1"),
        .init(
            name: "untrusted peer: Forwarded is ignored", peer: "192.0.2.44", headers: [("Forwarded", "for=203.0.113.7")],
            client: "192.0.2.44"),
        .init(
            name: "IPv4-mapped peer is trusted as its IPv4", peer: "::ffff:127.0.0.1", headers: [("X-Forwarded-For", "203.0.113.7")],
            client: "203.0.113.7"),
        .init(
            name: "IPv6 peer in a trusted range", trusted: "fd00::/8", peer: "fd12::5", headers: [("X-Forwarded-For", "203.0.113.7")],
            client: "203.0.113.7"),
        // RFC 7239, section 4's and 7.4's examples.
        .init(name: "Forwarded", headers: [("Forwarded", "for=192.0.2.60;proto=http;by=203.0.113.43")], client: "192.0.2.60"),
        .init(name: "Forwarded, quoted IPv6 with a port", headers: [("Forwarded", #"For="[2001:db8:cafe::17]:4711""#)], client: "2001:db8:cafe::17"),
        .init(name: "Forwarded, quoted IPv4 with a port", headers: [("Forwarded", #"for="192.0.2.43:47011""#)], client: "192.0.2.43"),
        .init(
            name: "Forwarded, a chain", headers: [("Forwarded", "for=192.0.2.43, for=198.51.100.17;by=203.0.113.60;proto=http, for=10.0.0.9")],
            client: "198.51.100.17"),
        .init(name: "Forwarded, for=unknown: the proxy", headers: [("Forwarded", "for=unknown")], client: "127.0.0.1"),
        .init(
            name: "Forwarded, for=unknown reported by a trusted hop: that hop", headers: [("Forwarded", "for=unknown, for=10.0.0.5")],
            client: "10.0.0.5"),
        .init(name: "Forwarded, an obfuscated node: the proxy", headers: [("Forwarded", #"for="_gazonk""#)], client: "127.0.0.1"),
        .init(name: "Forwarded, unterminated quote: the peer", headers: [("Forwarded", #"for="[2001:db8::1"#)], client: "127.0.0.1"),
        .init(
            name: "Forwarded, no bracket around IPv6 with a port: the peer", headers: [("Forwarded", #"for="2001:db8::1:80x""#)], client: "127.0.0.1"),
        .init(name: "Forwarded, garbage: the peer", headers: [("Forwarded", "a=b=c;;;,,\"")], client: "127.0.0.1"),
        .init(
            name: "X-Forwarded-For wins over Forwarded", headers: [("Forwarded", "for=198.51.100.1"), ("X-Forwarded-For", "203.0.113.7")],
            client: "203.0.113.7"),
    ]

    @Test("the client address, from the peer or a trusted proxy's headers", arguments: cases)
    func resolves(_ example: Case) throws {
        #expect(try Self.resolve(example.trusted, peer: example.peer, example.headers).address == example.client)
    }

    @Test("X-Forwarded-Proto (or Forwarded's proto) counts only from a trusted proxy")
    func scheme() throws {
        let trusted = "127.0.0.1"
        #expect(try Self.resolve(trusted, peer: "127.0.0.1", [("X-Forwarded-Proto", "https")]).scheme == "https")
        #expect(try Self.resolve(trusted, peer: "127.0.0.1", [("X-Forwarded-Proto", "HTTP")]).scheme == "http")
        #expect(try Self.resolve(trusted, peer: "127.0.0.1", [("X-Forwarded-Proto", "gopher")]).scheme == nil)
        #expect(try Self.resolve(trusted, peer: "127.0.0.1", [("Forwarded", "for=192.0.2.1;proto=https")]).scheme == "https")
        #expect(try Self.resolve(trusted, peer: "192.0.2.9", [("X-Forwarded-Proto", "https")]).scheme == nil)
    }

    @Test(
        "trusted_proxies takes addresses and ranges, IPv4 and IPv6, and refuses a bad entry by name",
        arguments: ["10.0.0.0/33", "::1/129", "proxy.local", "1.2.3.4/-1", "1.2.3.4/x", "1.2.3.4/", "127.0.0.1, 300.1.1.1"])
    func refusesBadEntries(_ entry: String) throws {
        #expect(throws: HeraldConfiguration.Invalid.self) { try TrustedProxies(parsing: entry) }
        #expect(throws: HeraldConfiguration.Invalid.self) { try HeraldConfiguration(values: ["HERALD_TRUSTED_PROXIES": entry]) }
        do {
            _ = try HeraldConfiguration(values: ["HERALD_TRUSTED_PROXIES": entry])
        } catch {
            #expect("\(error)".contains("HERALD_TRUSTED_PROXIES"))
        }
    }

    @Test("ranges match by their prefix; host bits of a range are ignored")
    func ranges() throws {
        let proxies = try TrustedProxies(parsing: "10.1.2.3/8, 2001:db8::/32, 192.0.2.1, ::ffff:172.16.0.0/108")
        #expect(proxies.description == "10.0.0.0/8, 2001:db8::/32, 192.0.2.1/32, 172.16.0.0/12")
        for inside in ["10.255.0.1", "2001:db8:ffff::1", "192.0.2.1", "172.31.255.255", "::ffff:10.0.0.1"] {
            #expect(proxies.contains(try #require(IPAddress(inside))), "\(inside)")
        }
        for outside in ["11.0.0.1", "2001:db9::1", "192.0.2.2", "172.32.0.0", "::1"] {
            #expect(!proxies.contains(try #require(IPAddress(outside))), "\(outside)")
        }
    }

    @Test("registrations_per_minute is a setting, 30 by default")
    func registrationSetting() throws {
        #expect(try HeraldConfiguration(values: [:]).server.settings.registrationsPerMinute == 30)
        #expect(try HeraldConfiguration(values: ["HERALD_REGISTRATIONS_PER_MINUTE": "120"]).server.settings.registrationsPerMinute == 120)
        #expect(throws: HeraldConfiguration.Invalid.self) { try HeraldConfiguration(values: ["HERALD_REGISTRATIONS_PER_MINUTE": "0"]) }
    }

    /// Registers from `count` callers at once, on connections of their own, each sending
    /// `headers(i)`; returns the statuses.
    static func register(
        port: Int, count: Int, headers: @escaping @Sendable (Int) -> [(String, String)]
    ) async throws -> [HTTPResponse.Status] {
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { Task { try? await http.shutdown() } }
        return try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for index in 0..<count {
                group.addTask {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/devices")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    for (name, value) in headers(index) { request.headers.add(name: name, value: value) }
                    let token = String(format: "%064x", UInt64.random(in: 1...UInt64.max))
                    request.body = .bytes(ByteBuffer(string: #"{"platform":"ios","push_token":"\#(token)"}"#))
                    return HTTPResponse.Status(code: Int(try await http.execute(request, timeout: .seconds(10)).status.code))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("behind a trusted proxy, 40 phones registering at once each have their own bucket; one phone is still limited")
    func trustedProxyRegistrations() async throws {
        var nds = try TestNDS()  // 5 registrations a minute
        nds.settings.trustedProxies = try TrustedProxies(parsing: "127.0.0.1")
        try await nds.app().test(.live) { client in
            let port = try #require(client.port)
            let phones = try await Self.register(port: port, count: 40) { [("X-Forwarded-For", "192.0.2.\($0 + 1)")] }
            #expect(phones.filter { $0 == .created }.count == 40, "\(phones)")
            // One address, eight times at once: five pass, three wait.
            let one = try await Self.register(port: port, count: 8) { _ in [("X-Forwarded-For", "198.51.100.5")] }
            #expect(one.filter { $0 == .created }.count == 5, "\(one)")
            #expect(one.filter { $0 == .tooManyRequests }.count == 3, "\(one)")
            // What a phone writes itself, left of the address the proxy appended, is not believed.
            let spoofing = try await Self.register(port: port, count: 8) { [("X-Forwarded-For", "203.0.113.\($0), 198.51.100.6")] }
            #expect(spoofing.filter { $0 == .created }.count == 5, "\(spoofing)")
        }
    }

    @Test("a direct caller that is not a trusted proxy cannot choose its address with either header")
    func untrustedCaller() async throws {
        var nds = try TestNDS()
        nds.settings.trustedProxies = try TrustedProxies(parsing: "10.0.0.0/8, ::1")
        try await nds.app().test(.live) { client in
            let statuses = try await Self.register(port: try #require(client.port), count: 12) { index in
                index.isMultiple(of: 2) ? [("X-Forwarded-For", "192.0.2.\(index)")] : [("Forwarded", "for=192.0.2.\(index)")]
            }
            #expect(statuses.filter { $0 == .created }.count == 5, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 7, "\(statuses)")
        }
    }

    @Test("the dashboard's cookie is Secure when a trusted proxy says the browser came over https, and only then")
    func secureCookie() async throws {
        var nds = try TestNDS()
        nds.settings.trustedProxies = try TrustedProxies(parsing: "127.0.0.1")
        let admin = try await nds.apiKey([.admin])
        try await nds.app().test(.live) { client in
            func setCookie(_ proto: String?) async throws -> String {
                var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                if let proto { headers[HTTPField.Name("X-Forwarded-Proto")!] = proto }
                let response = try await client.execute(
                    uri: "/admin/login", method: .post, headers: headers, body: ByteBuffer(string: "key=\(admin)"))
                #expect(response.status == .seeOther)
                return response.headers[.setCookie] ?? ""
            }
            let https = try await setCookie("https")
            let http = try await setCookie("http")
            let direct = try await setCookie(nil)
            #expect(https.hasSuffix("; Secure"))
            #expect(!http.contains("Secure"))
            #expect(!direct.contains("Secure"))
        }
        nds.settings.trustedProxies = try TrustedProxies(parsing: "10.0.0.0/8")
        try await nds.app().test(.live) { client in
            let response = try await client.execute(
                uri: "/admin/login", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", HTTPField.Name("X-Forwarded-Proto")!: "https"],
                body: ByteBuffer(string: "key=\(admin)"))
            #expect(!(response.headers[.setCookie] ?? "").contains("Secure"))
        }
    }
}
