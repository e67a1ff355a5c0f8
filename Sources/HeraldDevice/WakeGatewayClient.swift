import Foundation
import HeraldWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device routes of a wake gateway (Bitkit's protocol, which Herald serves under `/wake`):
/// what bitkit-core's `wake` client calls, for an app built on Herald's plugin. Opening the
/// wakes themselves needs secp256k1 and lives apart (`HeraldWake`), so the plugin links none.
public struct WakeGatewayClient: Sendable {
    /// The gateway URL, e.g. `https://nds.example/wake`; routes resolve under it.
    public let gateway: URL
    let session: URLSession

    public init(gateway: URL, session: URLSession = URLSession(configuration: .ephemeral)) {
        self.gateway = gateway
        self.session = session
    }

    /// What the gateway refused: its status and `{"error","message"}`.
    public struct Rejected: Error, Sendable, Hashable, CustomStringConvertible {
        public var status: Int
        public var code: String
        public var message: String
        public var description: String { "HTTP \(status) \(code): \(message)" }
    }

    /// `GET v1/info`: the audience to sign registrations for.
    public func info() async throws -> WakeServerInfo {
        try await call("v1/info", method: "GET", body: Optional<Int>.none, secret: nil)
    }

    /// `POST v1/devices` with the proofs already in `request`.
    ///
    /// - Parameter bearer: What the server needs beside the proofs, if anything: an API key of
    ///   scope `devices` for a server in `registration: key` (the app's backend registers), or the
    ///   install's `wkd_` secret when its identities have changed.
    public func register(_ request: WakeRegistrationRequest, bearer: String? = nil) async throws -> WakeRegistrationAnswer {
        try await call("v1/devices", method: "POST", body: request, secret: bearer)
    }

    /// `POST v1/acks`: `handled` cancels the wake's fallback alert.
    public func acknowledge(wakeID: String, outcome: WakeAckOutcome, secret: String) async throws {
        let _: Empty = try await call("v1/acks", method: "POST", body: WakeAck(id: wakeID.lowercased(), outcome: outcome), secret: secret)
    }

    /// `PUT v1/presence`: while present, wakes are not pushed.
    public func setPresence(ttlSeconds: Int, secret: String) async throws -> WakePresenceAnswer {
        try await call("v1/presence", method: "PUT", body: WakePresenceBody(ttlSecs: ttlSeconds), secret: secret)
    }

    public func clearPresence(secret: String) async throws {
        let _: Empty = try await call("v1/presence", method: "DELETE", body: Optional<Int>.none, secret: secret)
    }

    public func setTopics(_ topics: [String], secret: String) async throws -> WakeTopicsBody {
        try await call("v1/devices/self/topics", method: "PUT", body: WakeTopicsBody(topics: topics), secret: secret)
    }

    /// `DELETE v1/devices/self`: the secret is revoked.
    public func unregister(secret: String) async throws {
        let _: Empty = try await call("v1/devices/self", method: "DELETE", body: Optional<Int>.none, secret: secret)
    }

    private struct Empty: Decodable {}
    private struct ErrorBody: Decodable {
        var error: String
        var message: String
    }

    private func call<Body: Encodable, Answer: Decodable>(
        _ path: String, method: String, body: Body?, secret: String?
    ) async throws -> Answer {
        var request = URLRequest(url: gateway.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try WireJSON.encode(body)
        }
        if let secret { request.setValue("Bearer " + secret, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            let body = try? WireJSON.decode(ErrorBody.self, from: data)
            throw Rejected(status: status, code: body?.error ?? "unknown", message: body?.message ?? "the response carries no wake error body")
        }
        if Answer.self == Empty.self { return Empty() as! Answer }
        return try WireJSON.decode(Answer.self, from: data)
    }
}

extension DevicePlugin {
    /// Handles a wake opened from a wake gateway's push (`HeraldWake.WakeEnvelope`): a topic
    /// `namespace.kind` whose kind is one of the LSP wakes (Bitkit's and Herald's names agree:
    /// `incomingHtlc`, `cjitPaymentArrived` …) runs as Herald's own wake, the payload's
    /// `paymentHash` naming the payment. Nil for a topic the plugin has no task for: the app
    /// acknowledges those `no_handler`.
    public func handle(gatewayWakeTopic topic: String, payloadJSON: String?) async -> HandlingResult? {
        let kind = WakeKind(rawValue: String(topic.split(separator: ".", maxSplits: 1).last ?? ""))
        guard WakeKind.known.contains(kind) else { return nil }
        var userInfo: [String: JSONValue] = [WakePushKey.type: .string(kind.rawValue)]
        if let payloadJSON, let payload = try? JSONParser.parse(Array(payloadJSON.utf8)) {
            if let hash = payload["paymentHash"]?.stringValue ?? payload["payment_hash"]?.stringValue {
                userInfo[WakePushKey.paymentHash] = .string(hash)
            }
        }
        return await handle(decode(userInfo: userInfo))
    }
}

extension HandlingResult {
    /// What a wake gateway is told: `handled` cancels its fallback alert, anything else lets it fire.
    public var wakeAckOutcome: WakeAckOutcome { disposition == .handled ? .handled : .failed }
}
