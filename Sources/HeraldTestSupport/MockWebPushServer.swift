import Crypto
import Foundation
import HeraldWire
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore

/// A local look-alike of a Web Push service (RFC 8030) or a UnifiedPush distributor's server,
/// on 127.0.0.1 over TLS: HTTP/2 and HTTP/1.1 by ALPN, or HTTP/1.1 only, as a small self-hosted
/// distributor speaks.
///
/// `POST /push/{id}` is a subscription's endpoint. Each message must carry a VAPID
/// authorization (RFC 8292) whose ES256 JWT verifies with its own `k`, names this server's
/// origin as `aud`, expires within 24 hours as an integer and has a `mailto:` or `https:` `sub`;
/// `TTL`; `Content-Encoding: aes128gcm`; a body of at most 4,096 bytes that opens with the
/// subscription's private key and auth secret (RFC 8291). It answers 201 with a `Location`, or
/// what the test scripted for the subscription.
public struct MockWebPushServer: Sendable {
    /// What the endpoints received, in order (also what they refused).
    public let messages = RequestLog<MockWebPushMessage>()
    /// Answers scripted per subscription id.
    public let script = AnswerScript<MockWebPushAnswer>()

    let certificate: TestCertificate
    let http1Only: Bool
    let now: @Sendable () -> Date
    let responseDelay: Duration?
    let state = State()

    /// - Parameters:
    ///   - http1Only: Offer HTTP/1.1 only (no ALPN `h2`).
    ///   - now: The clock the VAPID `exp` is checked against.
    ///   - responseDelay: Hold every answer this long (to see requests overlap).
    public init(
        certificate: TestCertificate, http1Only: Bool = false, now: @escaping @Sendable () -> Date = { Date() },
        responseDelay: Duration? = nil
    ) {
        self.certificate = certificate
        self.http1Only = http1Only
        self.now = now
        self.responseDelay = responseDelay
    }

    /// The most requests it held at once.
    public var maxConcurrent: Int {
        get async { await state.maxInFlight }
    }

    /// A subscription as a browser or a UnifiedPush connector would make it: a fresh P-256 key
    /// and auth secret, and an endpoint here. Call after ``start(logger:)``.
    public func makeSubscription(id: String = UUID().uuidString) async throws -> MockWebPushSubscription {
        guard let baseURL = await state.baseURL else { throw MockServerError.didNotStart }
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let subscription = MockWebPushSubscription(
            id: id,
            subscription: WebPushSubscription(
                endpoint: "\(baseURL)/push/\(id)",
                keys: .init(p256dh: key.publicKey.x963Representation.base64URLEncodedString, auth: auth.base64URLEncodedString)
            ),
            privateKey: key,
            authSecret: auth
        )
        await state.add(subscription)
        return subscription
    }

    public func start(
        logger: Logger = Logger(label: "mock-webpush", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        let router = Router(context: MockRequestContext.self)
        router.post("/push/:id") { request, context in
            try await self.receive(request, id: context.parameters.get("id") ?? "")
        }
        let tls = try certificate.serverTLSConfiguration()
        let http1Only = self.http1Only
        let running = try await RunningMockServer.start(
            router: router, server: http1Only ? try .tls(.http1(), tlsConfiguration: tls) : try .http2Upgrade(tlsConfiguration: tls), tls: true,
            logger: logger)
        await state.setBaseURL(running.baseURL)
        return running
    }

    public func withRunning<T: Sendable>(_ body: (RunningMockServer) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }

    private func receive(_ request: Request, id: String) async throws -> Response {
        await state.enter()
        do {
            if let responseDelay { try await Task.sleep(for: responseDelay) }
            let response = try await answer(request, id: id)
            await state.leave()
            return response
        } catch {
            await state.leave()
            throw error
        }
    }

    private func answer(_ request: Request, id: String) async throws -> Response {
        let body = Data(try await request.body.collect(upTo: 64 * 1024).readableBytesView)
        let headers = request.headersByName
        var entry = MockWebPushMessage(
            subscriptionID: id, headers: headers, body: body, bodyBytes: body.count,
            ttl: headers["ttl"].flatMap(Int.init), urgency: headers["urgency"], topic: headers["topic"],
            vapidKey: nil, vapidSubject: nil, plaintext: nil, answer: .created
        )
        entry.answer = await check(headers: headers, body: body, id: id, into: &entry)
        if entry.answer == .created, let scripted = await script.next(for: id) { entry.answer = scripted }
        await messages.append(entry)
        var response = Response(status: .init(code: entry.answer.status))
        if entry.answer.status == 201 {
            response.headers[.location] = "\(await state.baseURL ?? "")/message/\(UUID().uuidString)"
        }
        if let retryAfter = entry.answer.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        if let text = entry.answer.body { response.body = .init(byteBuffer: ByteBuffer(string: text)) }
        return response
    }

    /// The first rule the message breaks, as a push service answers it; `.created` when none.
    private func check(headers: [String: String], body: Data, id: String, into entry: inout MockWebPushMessage) async -> MockWebPushAnswer {
        guard let subscription = await state.subscription(id) else { return .init(status: 404, body: "no such subscription") }
        guard let authorization = headers["authorization"], let vapid = Self.vapidParts(authorization) else {
            return .init(status: 401, body: "missing VAPID authorization")
        }
        guard let claims = Self.verify(token: vapid.token, key: vapid.key) else {
            return .init(status: 401, body: "VAPID signature does not verify with k")
        }
        entry.vapidKey = vapid.key
        entry.vapidSubject = claims.sub
        let origin = await state.baseURL ?? ""
        guard claims.aud == origin else { return .init(status: 401, body: "aud is \(claims.aud ?? "absent"), not \(origin)") }
        let expiry = claims.exp ?? 0
        let moment = now().timeIntervalSince1970
        guard Double(expiry) > moment, Double(expiry) <= moment + 24 * 3600 + 60 else {
            return .init(status: 401, body: "exp must lie within the next 24 hours")
        }
        guard let sub = claims.sub, sub.hasPrefix("mailto:") || sub.hasPrefix("https:") else {
            return .init(status: 401, body: "sub must be a mailto: or https: URL")
        }
        guard entry.ttl != nil else { return .init(status: 400, body: "TTL header required") }
        guard headers["content-encoding"] == "aes128gcm" else { return .init(status: 400, body: "Content-Encoding must be aes128gcm") }
        guard body.count <= 4096 else { return .init(status: 413, body: "payload too large") }
        if let length = headers["content-length"], Int(length) != body.count {
            return .init(status: 400, body: "Content-Length says \(length), the body is \(body.count) bytes")
        }
        if let urgency = entry.urgency, !["very-low", "low", "normal", "high"].contains(urgency) {
            return .init(status: 400, body: "invalid Urgency")
        }
        if let topic = entry.topic,
            topic.utf8.count > 32 || !topic.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        {
            return .init(status: 400, body: "invalid Topic")
        }
        do {
            entry.plaintext = try WebPushMessage.decrypt(body, privateKey: subscription.privateKey, authSecret: subscription.authSecret)
        } catch {
            return .init(status: 400, body: "the message does not decrypt: \(error)")
        }
        return .created
    }

    /// `vapid t=<jwt>, k=<key>`, in either order.
    static func vapidParts(_ header: String) -> (token: String, key: String)? {
        guard header.lowercased().hasPrefix("vapid ") else { return nil }
        var token: String?
        var key: String?
        for part in header.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { token = String(pair[1]) }
            if pair[0] == "k" { key = String(pair[1]) }
        }
        guard let token, let key else { return nil }
        return (token, key)
    }

    struct Claims: Decodable {
        var aud: String?
        var exp: Int?
        var sub: String?
    }

    /// The claims of an ES256 JWT whose signature verifies with `key` (uncompressed P-256,
    /// base64url); nil otherwise. Verified with swift-crypto, not with the signer under test.
    static func verify(token: String, key: String) -> Claims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let keyBytes = Data(base64URL: key), let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes),
            let header = Data(base64URL: String(parts[0])),
            (try? JSONDecoder().decode(JWTHeaderFields.self, from: header))?.alg == "ES256",
            let payload = Data(base64URL: String(parts[1])),
            let signatureBytes = Data(base64URL: String(parts[2])),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return nil }
        return try? JSONDecoder().decode(Claims.self, from: payload)
    }

    actor State {
        var baseURL: String?
        var subscriptions: [String: MockWebPushSubscription] = [:]
        var inFlight = 0
        var maxInFlight = 0
        func enter() {
            inFlight += 1
            maxInFlight = max(maxInFlight, inFlight)
        }
        func leave() { inFlight -= 1 }
        func setBaseURL(_ url: String) { baseURL = url }
        func add(_ subscription: MockWebPushSubscription) { subscriptions[subscription.id] = subscription }
        func subscription(_ id: String) -> MockWebPushSubscription? { subscriptions[id] }
    }
}

/// A subscription the look-alike made, with the device's half: its private key and auth secret.
public struct MockWebPushSubscription: Sendable {
    public var id: String
    /// What the app registers with Herald.
    public var subscription: WebPushSubscription
    public var privateKey: P256.KeyAgreement.PrivateKey
    public var authSecret: Data
}

/// What the look-alike answers one message.
public struct MockWebPushAnswer: Sendable, Hashable {
    public var status: Int
    public var body: String?
    public var retryAfter: Int?

    public init(status: Int, body: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.body = body
        self.retryAfter = retryAfter
    }

    public static let created = MockWebPushAnswer(status: 201)
    public static let gone = MockWebPushAnswer(status: 410, body: "subscription expired")
    public static let notFound = MockWebPushAnswer(status: 404, body: "subscription not found")
    public static let tooLarge = MockWebPushAnswer(status: 413, body: "payload too large")
    public static func tooManyRequests(retryAfter: Int? = nil) -> MockWebPushAnswer {
        MockWebPushAnswer(status: 429, body: "slow down", retryAfter: retryAfter)
    }
}

/// One message the look-alike received.
public struct MockWebPushMessage: Sendable {
    public var subscriptionID: String
    public var headers: [String: String]
    /// The body as it came: the `aes128gcm` ciphertext, for another receiver to open.
    public var body: Data
    public var bodyBytes: Int
    public var ttl: Int?
    public var urgency: String?
    public var topic: String?
    /// The `k` of the VAPID header, when its JWT verified.
    public var vapidKey: String?
    public var vapidSubject: String?
    /// The decrypted message, when it opened.
    public var plaintext: Data?
    public var answer: MockWebPushAnswer
}
