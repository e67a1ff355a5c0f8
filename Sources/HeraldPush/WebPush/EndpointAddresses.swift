import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether an address chosen by whoever registers may be connected to: a Web Push endpoint must
/// be on the public internet, not on the loopback, a private network, a link-local or a
/// multicast address (an attacker would otherwise make Herald reach inside its own network).
public enum EndpointAddresses {
    /// True for an address on the public internet.
    public static func isPublic(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4):
            return isPublicIPv4(UInt32(bigEndian: v4.address.sin_addr.s_addr))
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            return isPublicIPv6(bytes)
        case .unixDomainSocket:
            return false
        }
    }

    static func isPublicIPv4(_ a: UInt32) -> Bool {
        func within(_ base: UInt32, _ bits: UInt32) -> Bool { a >> (32 - bits) == base >> (32 - bits) }
        let refused: [(UInt32, UInt32)] = [
            (0x0000_0000, 8),  // "this network"
            (0x0A00_0000, 8),  // 10/8 private
            (0x6440_0000, 10),  // 100.64/10 shared (carrier-grade NAT)
            (0x7F00_0000, 8),  // loopback
            (0xA9FE_0000, 16),  // link-local
            (0xAC10_0000, 12),  // 172.16/12 private
            (0xC000_0000, 24),  // IETF protocol assignments
            (0xC000_0200, 24),  // documentation (TEST-NET-1)
            (0xC058_6300, 24),  // 6to4 relay anycast
            (0xC0A8_0000, 16),  // 192.168/16 private
            (0xC612_0000, 15),  // benchmarking
            (0xC633_6400, 24),  // documentation (TEST-NET-2)
            (0xCB00_7100, 24),  // documentation (TEST-NET-3)
            (0xE000_0000, 4),  // multicast
            (0xF000_0000, 4),  // reserved, broadcast
        ]
        return !refused.contains { within($0.0, $0.1) }
    }

    static func isPublicIPv6(_ b: [UInt8]) -> Bool {
        guard b.count == 16 else { return false }
        if b.allSatisfy({ $0 == 0 }) { return false }  // unspecified
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return false }  // loopback
        func v4(at i: Int) -> UInt32 { UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3]) }
        // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and IPv4-translated
        // (::ffff:0:a.b.c.d): judged as the IPv4 address inside.
        if b[0..<10].allSatisfy({ $0 == 0 }) && (b[10] == 0xFF && b[11] == 0xFF || b[10] == 0 && b[11] == 0) {
            return isPublicIPv4(v4(at: 12))
        }
        if b[0..<8].allSatisfy({ $0 == 0 }) && b[8] == 0xFF && b[9] == 0xFF && b[10] == 0 && b[11] == 0 {
            return isPublicIPv4(v4(at: 12))
        }
        // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits: judged as that address.
        if b[0] == 0x20 && b[1] == 0x02 { return isPublicIPv4(v4(at: 2)) }
        // Teredo (2001::/32) hides its client's address; a deprecated tunnel no push service uses.
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0 { return false }
        // Discard-only (100::/64).
        if b[0] == 0x01 && b[1..<8].allSatisfy({ $0 == 0 }) { return false }
        if b[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 site-local (deprecated)
        if b[0] == 0xFF { return false }  // multicast
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B { return false }  // NAT64 (and its local-use /48), maps IPv4 inside
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return false }  // documentation
        return true
    }

    /// Why a host may not be used, or nil when every address it resolves to is public. A host
    /// that does not resolve is refused too: nothing could be delivered to it. The reason starts
    /// with the host, for the caller to say what the host is.
    public static func refusal(host: String, port: Int, threadPool: NIOThreadPool = .singleton) async -> String? {
        do {
            _ = try await checkedAddress(host: host, port: port, threadPool: threadPool)
            return nil
        } catch {
            return error.description
        }
    }

    /// The address to connect to for `host`, resolved once and checked: connecting to it, not
    /// to the name again, leaves DNS no second answer to give (rebinding). Throws the refusal's
    /// words when any address is not public or the name does not resolve.
    public static func checkedAddress(host: String, port: Int, threadPool: NIOThreadPool = .singleton) async throws(Refused) -> SocketAddress {
        let addresses: [SocketAddress]
        do {
            addresses = try await resolve(host: host, port: port, threadPool: threadPool)
        } catch {
            throw Refused(description: "\(host) does not resolve", unresolvable: true)
        }
        guard let first = addresses.first else { throw Refused(description: "\(host) does not resolve", unresolvable: true) }
        if let inside = addresses.first(where: { !isPublic($0) }) {
            throw Refused(description: "\(host) resolves to \(inside.ipAddress ?? "a non-public address"), which is not a public address")
        }
        return first
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
        /// The name does not resolve (a typo, a host gone), rather than resolving somewhere private.
        public var unresolvable = false
    }

    struct ResolutionFailed: Error {}

    /// Every address `host` resolves to, looked up on `threadPool` (getaddrinfo blocks): no
    /// cooperative thread waits on DNS.
    public static func resolve(host: String, port: Int, threadPool: NIOThreadPool = .singleton) async throws -> [SocketAddress] {
        // An address literal needs no lookup.
        if let literal = try? SocketAddress(ipAddress: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port) {
            return [literal]
        }
        return try await threadPool.runIfActive {
            var hints = addrinfo()
            #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
            #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #endif
            hints.ai_family = AF_UNSPEC
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { throw ResolutionFailed() }
            defer { freeaddrinfo(first) }
            var addresses: [SocketAddress] = []
            var cursor: UnsafeMutablePointer<addrinfo>? = first
            while let info = cursor {
                if let raw = info.pointee.ai_addr {
                    switch Int32(raw.pointee.sa_family) {
                    case AF_INET:
                        raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { addresses.append(SocketAddress($0.pointee, host: host)) }
                    case AF_INET6:
                        raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { addresses.append(SocketAddress($0.pointee, host: host)) }
                    default:
                        break
                    }
                }
                cursor = info.pointee.ai_next
            }
            return addresses
        }
    }
}
