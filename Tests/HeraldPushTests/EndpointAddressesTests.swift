import HeraldPush
import NIOCore
import Testing

@Suite("Which endpoint addresses Herald may connect to")
struct EndpointAddressesTests {
    @Test(
        "public addresses pass",
        arguments: [
            "1.1.1.1", "8.8.8.8", "142.250.74.110", "2606:4700:4700::1111", "2a00:1450:4007:80e::200e",
            // 6to4 of a public address is that address.
            "2002:0808:0808::1",
        ])
    func publicAddresses(_ address: String) throws {
        #expect(EndpointAddresses.isPublic(try SocketAddress(ipAddress: address, port: 443)))
    }

    @Test(
        "loopback, private, shared, link-local, multicast, reserved and mapped ones do not",
        arguments: [
            "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.169.254",
            "0.0.0.0", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.0.8", "198.18.0.1",
            "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1",
            "2001:db8::1",
            // Issue 39: IPv4-translated, 6to4 of loopback and private, Teredo, NAT64 local use, discard-only,
            // and the documentation ranges.
            "::ffff:0:7f00:1", "::ffff:0:a00:1", "2002:7f00:1::1", "2002:c0a8:101::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "64:ff9b:1::a00:1", "100::1", "192.0.2.1", "198.51.100.7", "203.0.113.9", "192.88.99.1",
        ])
    func refused(_ address: String) throws {
        #expect(!EndpointAddresses.isPublic(try SocketAddress(ipAddress: address, port: 443)))
    }

    @Test("a host is refused when any of its addresses is not public, or when it does not resolve")
    func hosts() async {
        #expect(await EndpointAddresses.refusal(host: "127.0.0.1", port: 443)?.contains("127.0.0.1") == true)
        #expect(await EndpointAddresses.refusal(host: "localhost", port: 443) != nil)
        #expect(await EndpointAddresses.refusal(host: "[::1]", port: 443) != nil)
        #expect(await EndpointAddresses.refusal(host: "no-such-host.invalid", port: 443)?.contains("does not resolve") == true)
        #expect(await EndpointAddresses.refusal(host: "1.1.1.1", port: 443) == nil)
    }
}
