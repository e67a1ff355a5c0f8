import HTTPTypes
import Hummingbird
import NIOCore

/// An IP address as its bytes: 4 for IPv4, 16 for IPv6. An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`, what a dual-stack socket reports) is its IPv4 address, so one client has
/// one spelling and one rate-limit bucket.
struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    init?(_ text: some StringProtocol) {
        guard !text.isEmpty, text.utf8.count <= 45, let socket = try? SocketAddress(ipAddress: String(text), port: 0) else { return nil }
        self.init(socket)
    }

    init?(_ socket: SocketAddress) {
        switch socket {
        case .v4(let address): self.init(bytes: withUnsafeBytes(of: address.address.sin_addr) { Array($0) })
        case .v6(let address): self.init(bytes: withUnsafeBytes(of: address.address.sin6_addr) { Array($0) })
        case .unixDomainSocket: return nil
        }
    }

    init(bytes: [UInt8]) {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            self.bytes = Array(bytes[12...])
        } else {
            self.bytes = bytes
        }
    }

    /// The address as `inet_ntop` writes it (`2001:db8::1`, `192.0.2.1`).
    var description: String {
        let buffer = ByteBuffer(bytes: bytes)
        return (try? SocketAddress(packedIPAddress: buffer, port: 0))?.ipAddress ?? bytes.map(String.init).joined(separator: ".")
    }

    /// A node as proxies write it in `X-Forwarded-For` or a `Forwarded` `for=` (its quotes removed):
    /// an address, an IPv6 address in brackets, either with a port (`192.0.2.1:4711`, `[::1]:80`).
    init?(node: Substring) {
        if node.first == "[" {
            guard let close = node.firstIndex(of: "]") else { return nil }
            let rest = node[node.index(after: close)...]
            let inside = node[node.index(after: node.startIndex)..<close]
            guard inside.contains(":"), rest.isEmpty || (rest.first == ":" && rest.count > 1 && rest.dropFirst().allSatisfy(\.isASCIIDigit))
            else { return nil }
            self.init(inside)
            return
        }
        let colons = node.reduce(0) { $0 + ($1 == ":" ? 1 : 0) }
        if colons == 1, let colon = node.firstIndex(of: ":") {
            let port = node[node.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy(\.isASCIIDigit) else { return nil }
            self.init(node[..<colon])
            guard bytes.count == 4 else { return nil }
            return
        }
        self.init(node)
    }
}

/// A range of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or one address.
struct IPRange: Hashable, Sendable, CustomStringConvertible {
    let network: IPAddress
    let prefix: Int

    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let bits = address.bytes.count * 8
        var prefix = bits
        if parts.count == 2 {
            // An IPv4-mapped IPv6 range is an IPv4 range 96 bits shorter.
            let mapped = parts[0].contains(":") && address.bytes.count == 4
            guard parts[1].count <= 3, parts[1].allSatisfy(\.isASCIIDigit), let given = Int(parts[1]) else { return nil }
            prefix = mapped ? given - 96 : given
            guard prefix >= 0, prefix <= bits else { return nil }
        }
        self.prefix = prefix
        // Host bits cleared, so `10.1.2.3/8` means `10.0.0.0/8` as every router reads it.
        network = IPAddress(bytes: Self.masked(address.bytes, prefix: prefix))
    }

    func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, prefix: prefix) == network.bytes
    }

    var description: String { "\(network)/\(prefix)" }

    private static func masked(_ bytes: [UInt8], prefix: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let keep = min(8, max(0, prefix - index * 8))
            return keep == 8 ? byte : byte & ~(UInt8(0xff) >> keep)
        }
    }
}

/// The proxies whose forwarding headers Herald believes (`trusted_proxies`); none by default.
public struct TrustedProxies: Sendable, Hashable, CustomStringConvertible {
    let ranges: [IPRange]

    public static let none = TrustedProxies(ranges: [])

    init(ranges: [IPRange]) { self.ranges = ranges }

    /// A comma-separated list of addresses and CIDR ranges, IPv4 and IPv6.
    public init(parsing text: String) throws(HeraldConfiguration.Invalid) {
        var ranges: [IPRange] = []
        for entry in text.split(separator: ",") {
            let entry = entry.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { continue }
            guard let range = IPRange(entry) else {
                throw HeraldConfiguration.Invalid("'\(entry.prefix(64))' is not an IP address or CIDR range (such as 10.0.0.0/8 or ::1)")
            }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    public var isEmpty: Bool { ranges.isEmpty }

    func contains(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    public var description: String { ranges.isEmpty ? "none" : ranges.map(\.description).joined(separator: ", ") }
}

/// Who sent a request: the one answer every per-address rule (registration limits, held
/// requests per client) and the logs read, computed once per request by
/// ``ClientAddressMiddleware``.
struct ClientAddressResolver: Sendable {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwarded = HTTPField.Name("Forwarded")!
    /// Forwarding hops read at most; a longer chain is not believed (the peer is the client).
    static let maxHops = 32

    let trusted: TrustedProxies

    struct Resolved: Equatable {
        /// The client's address; nil when the peer has none (an in-process test).
        var address: IPAddress?
        /// `https` or `http` as a trusted proxy reported it; nil when none did.
        var scheme: String?
    }

    /// The client: the peer, unless the peer is a trusted proxy and says who it forwards for,
    /// in `X-Forwarded-For` (the rightmost address that is not itself a trusted proxy) or else
    /// RFC 7239 `Forwarded`. A header that cannot be read leaves the peer.
    func resolve(peer: SocketAddress?, headers: HTTPFields) -> Resolved {
        let peerAddress = peer.flatMap(IPAddress.init(_:))
        guard let peerAddress, !trusted.isEmpty, trusted.contains(peerAddress) else { return Resolved(address: peerAddress) }
        var scheme = Self.scheme(headers[values: Self.forwardedProto].last)
        let forwardedFor = headers[values: Self.forwardedFor]
        if !forwardedFor.isEmpty {
            let nodes = forwardedFor.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            guard nodes.count <= Self.maxHops else { return Resolved(address: peerAddress, scheme: scheme) }
            let read = nodes.map(Self.trimmed).map { $0.lowercased() == "unknown" ? Node.unknown : Node.address(IPAddress(node: $0)) }
            return Resolved(address: walk(read, peer: peerAddress), scheme: scheme)
        }
        let forwarded = headers[values: Self.forwarded]
        guard !forwarded.isEmpty else { return Resolved(address: peerAddress, scheme: scheme) }
        guard let elements = Self.forwardedElements(forwarded.joined(separator: ",")) else { return Resolved(address: peerAddress, scheme: scheme) }
        if scheme == nil, let last = elements.last { scheme = Self.scheme(last.proto) }
        return Resolved(address: walk(elements.map(\.node), peer: peerAddress), scheme: scheme)
    }

    enum Node {
        /// An address, or nil for one that cannot be read.
        case address(IPAddress?)
        /// `for=unknown` or an obfuscated identifier: the hop that reported it is as far as we know.
        case unknown
    }

    /// From the right: past trusted proxies to the first address that is not one.
    private func walk(_ nodes: [Node], peer: IPAddress) -> IPAddress {
        guard !nodes.isEmpty, nodes.count <= Self.maxHops else { return peer }
        var reporter = peer
        for node in nodes.reversed() {
            switch node {
            case .unknown: return reporter
            case .address(nil): return peer
            case .address(let address?):
                if !trusted.contains(address) { return address }
                reporter = address
            }
        }
        // Every hop is a trusted proxy: the first of them is the closest to a client we know.
        return reporter
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    private static func scheme(_ value: String?) -> String? {
        guard let value else { return nil }
        let last = value.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return last == "https" || last == "http" ? last : nil
    }

    struct ForwardedElement {
        var node: Node
        var proto: String?
    }

    /// RFC 7239's `Forwarded` as its elements; nil when it does not parse. Parameters are
    /// `token=token` or `token="quoted"`, separated by `;`, elements by `,`.
    static func forwardedElements(_ header: String) -> [ForwardedElement]? {
        var elements: [ForwardedElement] = []
        var pairs: [(String, String)] = []
        var name = ""
        var value = ""
        var inValue = false
        var quoted = false
        var wasQuoted = false
        var escaped = false
        func endPair() -> Bool {
            let name = name.trimmingCharacters(in: .whitespaces).lowercased()
            let value = wasQuoted ? value : value.trimmingCharacters(in: .whitespaces)
            if name.isEmpty && value.isEmpty && !inValue { return true }
            guard !name.isEmpty, inValue, !value.isEmpty || wasQuoted else { return false }
            pairs.append((name, value))
            return true
        }
        func endElement() -> Bool {
            guard endPair() else { return false }
            var element = ForwardedElement(node: .unknown)
            for (name, value) in pairs {
                switch name {
                case "for":
                    if value.lowercased() == "unknown" || value.hasPrefix("_") {
                        element.node = .unknown
                    } else {
                        element.node = .address(IPAddress(node: value[...]))
                    }
                case "proto": element.proto = value
                default: break
                }
            }
            elements.append(element)
            pairs = []
            return elements.count <= maxHops
        }
        for character in header {
            if quoted {
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    value.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                guard inValue, value.trimmingCharacters(in: .whitespaces).isEmpty, !wasQuoted else { return nil }
                quoted = true
                wasQuoted = true
                value = ""
            case "=":
                guard !inValue else { return nil }
                inValue = true
            case ";":
                guard endPair() else { return nil }
                (name, value, inValue, wasQuoted) = ("", "", false, false)
            case ",":
                guard endElement() else { return nil }
                (name, value, inValue, wasQuoted) = ("", "", false, false)
            default:
                if wasQuoted {
                    guard character == " " || character == "\t" else { return nil }
                } else if inValue {
                    value.append(character)
                } else {
                    name.append(character)
                }
            }
        }
        guard !quoted, endElement() else { return nil }
        return elements
    }
}

/// Resolves each request's client (``ClientAddressResolver``) before any route runs, and names
/// it in the request's log lines.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let resolver: ClientAddressResolver

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let resolved = resolver.resolve(peer: context.remoteAddress, headers: request.headers)
        context.client = resolved.address
        // Rendered only when a line is logged: most requests log none.
        if let address = resolved.address { context.logger[metadataKey: "client.address"] = .stringConvertible(address) }
        context.forwardedScheme = resolved.scheme
        return try await next(request, context)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
