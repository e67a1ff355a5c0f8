import Foundation

/// A small seeded generator (SplitMix64), so a failing fuzz run can be repeated exactly.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Hostile requests over every route: bad bodies, odd heads, wrong secrets, pipelining.
struct HostileCases {
    var devices: [RegisteredDevice]
    var generator: SeededGenerator

    mutating func pick<T>(_ options: [T]) -> T { options.randomElement(using: &generator)! }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < p }

    /// Route paths, real ones with real and made-up ids.
    mutating func path() -> String {
        let device = pick(devices)
        return pick([
            "/api/v1/notify?platform=android&token=\(device.alias)",
            "/api/v1/notify?platform=ios&token=0a1b2c3d",
            "/api/v1/notify?platform=ios",
            "/api/v1/notify?token=abc",
            "/api/v1/notify?platform=windows&token=abc",
            "/api/v1/notify?platform=ios&platform=android&token=a&token=b",
            "/api/v1/notify?platform=ios&token=" + String(repeating: "f", count: 5_000),
            "/api/v1/notify?platform=ios&token=%00%ff%zz",
            "/api/v1/devices",
            "/api/v1/devices/\(device.id)",
            "/api/v1/devices/\(device.id)/pushes",
            "/api/v1/devices/\(device.id)/pushes?wait=nan&after=-1",
            "/api/v1/devices/\(device.id)/pushes?wait=inf",
            "/api/v1/devices/not-a-device",
            "/api/v1/reply/" + String(repeating: "a", count: 32),
            "/api/v1/reply/",
            "/api/v1/reply/" + String(repeating: "z", count: 300),
            "/.well-known/lnurlp/alice",
            "/.well-known/lnurlp/%2e%2e",
            "/lnurlp/alice/callback?amount=-1",
            "/lnurlp/alice/callback?amount=99999999999999999999999",
            "/lnurlp/alice/verify/zz",
            "/api/v1/lnurlpay",
            "/api/v1/users/u1/events",
            "/api/v1/users/u1/sessions",
            "/api/v1/users/u1/sessions/s1",
            "/api/v1/users/%ZZ/welcome",
            "/health", "/metrics", "/", "/../../etc/passwd", "//api//v1//notify", "*",
            "/" + String(repeating: "x", count: 9_000),
        ])
    }

    mutating func body() -> [UInt8] {
        let valid = #"{"event":"swap.update","data":{"id":"fuzz","status":"transaction.mempool"}}"#
        switch Int.random(in: 0..<16, using: &generator) {
        case 0: return Array(valid.utf8)
        case 1: return Array(valid.utf8.prefix(Int.random(in: 0..<valid.utf8.count, using: &generator)))
        case 2: return Array(#"{"event":"swap.update","data":{"id":"\u0000","status":"\ud800"}}"#.utf8)
        case 3: return Array(String(repeating: "[", count: 100_000).utf8)
        case 4: return Array(#"{"a":"#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 70_000) + Array("}".utf8)
        case 5: return [0xFF, 0xFE, 0x00, 0xC3, 0x28, 0x7B]
        case 6: return Array(#"{"platform":"ios","push_token":"\#(String(repeating: "a", count: 5_000))"}"#.utf8)
        case 7: return Array(#"{"template":"lnurlpay_info","data":{}}"#.utf8)
        case 8: return Array(#"{"event":"invoice.request","data":{"offer":"lno1","invoiceRequest":"lnr1","reply_url":"http://127.0.0.1:1/x"}}"#.utf8)
        case 9: return Array("9007199254740993\(String(repeating: "0", count: 150))e-150".utf8)
        case 10: return Array(#"{"event":"swap.update","data":{"id":1e400,"status":-0}}"#.utf8)
        case 11: return Array(#"{"push_token":"new","platform":"android"}"#.utf8)
        case 12: return Array(#"{"body":{"x":1},"cache_max_age":-5}"#.utf8)
        case 13: return Array(#"{"action":"DEPOSIT_RECEIVED","amount":"1"}"#.utf8)
        case 14: return []
        default: return Array(#"{"event":"#.utf8) + Array(repeating: UInt8(ascii: "{"), count: 2_000)
        }
    }

    mutating func headers() -> [String] {
        var headers: [String] = []
        if chance(0.7) { headers.append("Content-Type: " + pick(["application/json", "text/plain", "application/json; charset=latin1", ""])) }
        if chance(0.4) {
            let device = pick(devices)
            headers.append(
                "Authorization: "
                    + pick([
                        "Bearer wrong", "Bearer ", "Basic abc", "Bearer \(device.secret)x", "bearer hk_" + String(repeating: "0", count: 64),
                        "Bearer \(device.secret)",
                    ]))
        }
        if chance(0.2) { headers.append("Idempotency-Key: " + pick(["", String(repeating: "k", count: 300), "k\u{7f}", "ok-key"])) }
        if chance(0.05) { headers.append("X-Big: " + String(repeating: "h", count: 200_000)) }
        if chance(0.1) {
            headers.append(pick(["Expect: 100-continue", "Connection: close", "Host: evil", "X-Nul: a\u{0}b", "Content-Encoding: gzip"]))
        }
        return headers
    }

    /// One hostile request.
    mutating func next() -> RawHTTP.Request {
        let method = pick(["GET", "POST", "POST", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "BREW", "G\u{0}T"])
        let path = path()
        let body = body()
        let headers = headers()
        switch Int.random(in: 0..<12, using: &generator) {
        case 0:
            // A malformed chunked body.
            let chunk = pick(["-5", "zz", "FFFFFFFFFFFFFFFFFF", "3"])
            return RawHTTP.Request(
                bytes: Array(
                    (RawHTTP.Request.head(method, path, headers: headers + ["Transfer-Encoding: chunked"]) + "\(chunk)\r\nabc\r\n0\r\n\r\n").utf8))
        case 1:
            // Two Content-Length headers that disagree.
            return RawHTTP.Request(
                bytes: Array(RawHTTP.Request.head(method, path, headers: headers + ["Content-Length: 2", "Content-Length: 40"]).utf8)
                    + Array("{}".utf8))
        case 2:
            // Pipelined: three requests in one write.
            let one = RawHTTP.Request.method("POST", path, body: body, headers: headers).bytes
            let health = RawHTTP.Request.get("/health").bytes
            return RawHTTP.Request(bytes: one + health + health, responses: 3)
        case 3:
            // Not HTTP at all.
            return RawHTTP.Request(bytes: (0..<Int.random(in: 1..<512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 4:
            // A body shorter than its Content-Length: the server must give up on it.
            return RawHTTP.Request(
                bytes: Array(RawHTTP.Request.head(method, path, headers: headers + ["Content-Length: 100"]).utf8) + Array("{\"a\":".utf8))
        default:
            return RawHTTP.Request.method(method, path, body: body, headers: headers)
        }
    }
}
