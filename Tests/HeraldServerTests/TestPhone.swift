import AsyncHTTPClient
import Foundation
import HeraldStore
import HeraldWire
import NIOCore
import NIOHTTP1

/// A phone under test: reads the pushes the local development provider recorded for its token
/// and answers their `reply_url` over its own HTTP connections (a held request occupies the
/// test client's one connection).
struct TestPhone {
    struct Push: @unchecked Sendable {
        var seq: Int64
        var type: String
        /// `notification_payload`, decoded.
        var payload: [String: Any]
        var replyURL: String? { payload["reply_url"] as? String }
    }

    let nds: TestNDS
    let platform: Platform
    let token: String

    /// The pushes after `seq`, waiting up to `timeout` for at least one.
    func pushes(after seq: Int64, timeout: Duration = .seconds(10)) async throws -> [Push] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = try await nds.store.localPushes(platform: platform, token: token, after: seq, limit: 500)
            if !found.isEmpty || ContinuousClock.now >= deadline { return try found.map(Self.decode) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func decode(_ push: LocalPush) throws -> Push {
        let object = try JSONSerialization.jsonObject(with: push.payload) as? [String: Any] ?? [:]
        let type = object["notification_type"] as? String ?? ""
        let text = object["notification_payload"] as? String ?? "{}"
        let payload = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        return Push(seq: push.seq, type: type, payload: payload)
    }

    /// POSTs `json` to a reply URL of the NDS listening on `port`; returns the status and body.
    static func answer(
        _ replyURL: String, json: String, cacheControl: String? = nil, port: Int, using http: HTTPClient
    ) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: localURL(replyURL, port: port))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let cacheControl { request.headers.add(name: "Cache-Control", value: cacheControl) }
        request.body = .bytes(ByteBuffer(string: json))
        return try await get(request, using: http)
    }

    /// Any public URL of the test NDS (`http://nds.test/…`) on the live server's port.
    static func localURL(_ url: String, port: Int) -> String {
        "http://127.0.0.1:\(port)" + url.dropFirst("http://nds.test".count)
    }

    static func get(_ request: HTTPClientRequest, using http: HTTPClient) async throws -> (status: Int, body: String) {
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// An HTTP client with room for many connections to one host.
    static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 400)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Answers every push as `respond` says, until cancelled: the phone woken again and again.
    func serve(
        port: Int, using http: HTTPClient, respond: @escaping @Sendable (Push) -> (json: String, cacheControl: String?)?
    ) async throws {
        var seq: Int64 = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            while !Task.isCancelled {
                let found = try await nds.store.localPushes(platform: platform, token: token, after: seq, limit: 500)
                for push in try found.map(Self.decode) {
                    seq = push.seq
                    guard let url = push.replyURL, let reply = respond(push) else { continue }
                    group.addTask {
                        _ = try await Self.answer(url, json: reply.json, cacheControl: reply.cacheControl, port: port, using: http)
                    }
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The object as JSON text, for a reply body.
    var jsonText: String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: self, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}
