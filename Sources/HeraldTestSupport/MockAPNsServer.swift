import Foundation
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// A local look-alike of APNs: HTTP/2 over TLS on 127.0.0.1, token authentication, Apple's
/// request rules and error answers.
///
/// It checks what APNs checks — the ES256 provider token against the key's public half
/// (`kid`, `iss`, an integer `iat` under an hour old), `apns-topic`, `apns-push-type`,
/// `apns-priority`, `apns-expiration`, `apns-collapse-id`, a JSON body of at most 4096 bytes
/// with an `aps` dictionary, and for an ActivityKit push (`liveactivity`) its own topic and
/// the `aps` ActivityKit reads (`LiveActivityRules`) — and answers 200 with an `apns-id`, or
/// Apple's status and `{"reason": …}`. Tests script other answers per device token in
/// ``script`` and read every request from ``requests``.
public struct MockAPNsServer: Sendable {
    /// What the mock received, in order.
    public let requests = RequestLog<MockAPNsRequest>()
    /// Answers scripted per device token, or per token and push type (`"<token>/background"`,
    /// checked first): how a test throttles only a wake's silent push.
    public let script = AnswerScript<MockAPNsAnswer>()
    /// Connections and concurrent streams the client used.
    public let connections = ConnectionStats()
    /// The devices the accepted pushes go to; a test can take one offline.
    public let devices: MockAPNsDevices

    /// The signing keys it trusts, each with the topics (bundle ids) its team may push to.
    let credentials: [Credential]
    let certificate: TestCertificate
    let now: @Sendable () -> Date
    let responseDelay: Duration?
    let recordsRequests: Bool
    let observer: (@Sendable (MockAPNsRequest) -> Void)?
    let tokenUpdates = ProviderTokenUpdates()
    let verified = NIOLockedValueBox([String: MockAPNsRequest.Claims]())

    /// - Parameters:
    ///   - key: The signing key whose public half verifies provider tokens.
    ///   - topic: The only `apns-topic` accepted.
    ///   - certificate: The TLS identity the server presents.
    ///   - now: The clock for `iat` checks; share the provider's test clock.
    ///   - responseDelay: Hold every answer this long (to see streams overlap in a bench).
    ///   - recordsRequests: Keep every request in ``requests``. A bench sending millions turns it
    ///     off: the log would only grow.
    ///   - observer: Called with every request as it is answered: how a fleet simulation hands
    ///     each push to its simulated phone without keeping a log.
    /// A signing key and the topics its tokens may send to: an Apple team's key and the bundle
    /// ids of that team's apps.
    public struct Credential: Sendable {
        public var key: APNsTestKey
        public var topics: Set<String>
        public init(key: APNsTestKey, topics: Set<String>) {
            self.key = key
            self.topics = topics
        }
    }

    /// One key and one topic: a single app.
    public init(
        key: APNsTestKey,
        topic: String,
        certificate: TestCertificate,
        now: @escaping @Sendable () -> Date = { Date() },
        responseDelay: Duration? = nil,
        recordsRequests: Bool = true,
        observer: (@Sendable (MockAPNsRequest) -> Void)? = nil
    ) {
        self.init(
            credentials: [Credential(key: key, topics: [topic])], certificate: certificate, now: now,
            responseDelay: responseDelay, recordsRequests: recordsRequests, observer: observer
        )
    }

    /// Several keys, as APNs serves every team's apps: a token signed by one key sends only to
    /// its own topics (`TopicDisallowed` otherwise), and each key's token changes at most every
    /// 20 minutes (`TooManyProviderTokenUpdates`).
    public init(
        credentials: [Credential],
        certificate: TestCertificate,
        now: @escaping @Sendable () -> Date = { Date() },
        responseDelay: Duration? = nil,
        recordsRequests: Bool = true,
        observer: (@Sendable (MockAPNsRequest) -> Void)? = nil
    ) {
        self.recordsRequests = recordsRequests
        self.observer = observer
        self.credentials = credentials
        self.certificate = certificate
        self.now = now
        self.responseDelay = responseDelay
        self.devices = MockAPNsDevices(now: now)
    }

    /// Starts listening on 127.0.0.1 (a free port). Stop it with ``RunningMockServer/stop(timeout:)``.
    public func start(
        logger: Logger = Logger(label: "mock-apns", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        let keys = JWTKeyCollection()
        for credential in credentials {
            await keys.add(
                ecdsa: try ES256PublicKey(pem: credential.key.publicKeyPEM), kid: JWKIdentifier(string: credential.key.keyID))
        }
        let router = Router(context: MockRequestContext.self)
        router.post("/3/device/:token") { request, context in
            try await connections.tracking(context) { connection in
                try await self.respond(to: request, context: context, connection: connection, keys: keys)
            }
        }
        let tls = try certificate.serverTLSConfiguration()
        return try await RunningMockServer.start(router: router, server: try .http2Upgrade(tlsConfiguration: tls), tls: true, logger: logger)
    }

    /// The provider tokens each key has gone through, by key id: one per refresh, however many
    /// senders share the key.
    public func providerTokens() async -> [String: [String]] {
        await tokenUpdates.accepted
    }

    /// Runs the server for the duration of `body`.
    public func withRunning<T: Sendable>(_ body: (RunningMockServer) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }

    private func respond(
        to request: Request,
        context: MockRequestContext,
        connection: Int,
        keys: JWTKeyCollection
    ) async throws -> Response {
        let arrival = Date()
        // Read a little past the limit so an oversized body is answered 413, not cut off.
        let body = Data(try await request.body.collect(upTo: 64 * 1024).readableBytesView)
        let headers = request.headersByName
        let deviceToken = context.parameters.get("token") ?? ""
        let providerToken = bearerToken(headers["authorization"])
        let claims = await verify(providerToken, keys: keys)

        var answer = check(headers: headers, body: body, deviceToken: deviceToken, providerToken: providerToken, claims: claims)
        if answer == nil, let providerToken, let claims {
            answer = await tokenUpdates.use(providerToken, keyID: claims.keyID, at: now())
        }
        if answer == nil, let pushType = headers["apns-push-type"] {
            answer = await script.next(for: deviceToken + "/" + pushType)
        }
        if answer == nil {
            answer = await script.next(for: deviceToken)
        }
        let final = answer ?? .success
        if final.status == 403, final.reason == "InvalidProviderToken" || final.reason == "ExpiredProviderToken",
            let providerToken
        {
            await tokenUpdates.rejected(providerToken, keyID: claims?.keyID ?? "")
        }
        if recordsRequests || observer != nil {
            var received = MockAPNsRequest(
                deviceToken: deviceToken,
                headers: headers,
                body: body,
                arrival: arrival,
                providerToken: providerToken,
                claims: claims,
                connection: connection,
                stream: await context.streamNumber(),
                answer: final
            )
            received.orderedHeaders = request.headers.map { [$0.name.canonicalName, $0.value] }
            observer?(received)
            if recordsRequests {
                // The device first: a test that saw the request in the log finds it there too.
                if received.accepted { await devices.accepted(received) }
                await requests.append(received)
            }
        }
        if let responseDelay {
            try await Task.sleep(for: responseDelay)
        }
        if let stall = final.stall {
            try await Task.sleep(for: stall)
        }
        return Self.response(for: final, now: now(), apnsID: headers["apns-id"])
    }

    /// The first rule the request breaks, as APNs would answer it; nil when it is acceptable.
    private func check(
        headers: [String: String],
        body: Data,
        deviceToken: String,
        providerToken: String?,
        claims: MockAPNsRequest.Claims?
    ) -> MockAPNsAnswer? {
        guard providerToken != nil else { return MockAPNsAnswer(status: 403, reason: "MissingProviderToken") }
        guard let claims, let credential = credentials.first(where: { $0.key.keyID == claims.keyID }),
            claims.issuer == credential.key.teamID, claims.algorithm == "ES256"
        else {
            return .invalidProviderToken
        }
        let age = now().timeIntervalSince1970 - Double(claims.issuedAt)
        if age > 3600 { return .expiredProviderToken }
        if age < -300 { return .invalidProviderToken }

        guard !deviceToken.isEmpty, deviceToken.allSatisfy(\.isHexDigit) else { return .badDeviceToken }
        guard let topic = headers["apns-topic"] else { return MockAPNsAnswer(status: 400, reason: "MissingTopic") }
        let pushType = headers["apns-push-type"]
        guard Self.allows(topic: topic, pushType: pushType, topics: credential.topics) else {
            return MockAPNsAnswer(status: 400, reason: "TopicDisallowed")
        }
        guard let pushType, Self.pushTypes.contains(pushType) else {
            return MockAPNsAnswer(status: 400, reason: "InvalidPushType")
        }
        if let priority = headers["apns-priority"] {
            guard ["1", "5", "10"].contains(priority) else { return MockAPNsAnswer(status: 400, reason: "BadPriority") }
            // Apple: a background push with priority 10 is an error.
            if pushType == "background", priority == "10" { return MockAPNsAnswer(status: 400, reason: "BadPriority") }
            // Apple: an ActivityKit push is sent at 5 or 10 (absent, APNs reads 10).
            if pushType == "liveactivity", priority == "1" { return MockAPNsAnswer(status: 400, reason: "BadPriority") }
        }
        if let expiration = headers["apns-expiration"], Int64(expiration) == nil {
            return MockAPNsAnswer(status: 400, reason: "BadExpirationDate")
        }
        // Apple: apns-id must be a canonical UUID (8-4-4-4-12 hex digits).
        if let id = headers["apns-id"], id.utf8.count != 36 || UUID(uuidString: id) == nil {
            return MockAPNsAnswer(status: 400, reason: "BadMessageId")
        }
        if let collapseID = headers["apns-collapse-id"], collapseID.utf8.count > 64 {
            return MockAPNsAnswer(status: 400, reason: "BadCollapseId")
        }
        if body.isEmpty { return MockAPNsAnswer(status: 400, reason: "PayloadEmpty") }
        if body.count > 4096 { return .payloadTooLarge }
        // Apple documents no reason for a body that is not a JSON object with `aps`;
        // "BadPayload" is this mock's own, so a test can tell the case apart.
        guard let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], json["aps"] is [String: Any]
        else { return MockAPNsAnswer(status: 400, reason: "BadPayload") }
        if pushType == "liveactivity" { return LiveActivityRules.check(body) }
        return nil
    }

    /// Whether a token of a key with `topics` may push `pushType` to `topic`. An ActivityKit push
    /// goes to `<bundle id>.push-type.liveactivity` and only there: APNs refuses the bare bundle id
    /// for it, and that topic for any other push type.
    private static func allows(topic: String, pushType: String?, topics: Set<String>) -> Bool {
        let suffix = LiveActivityRules.topicSuffix
        if pushType == "liveactivity" {
            return topic.hasSuffix(suffix) && topics.contains(String(topic.dropLast(suffix.count)))
        }
        return topics.contains(topic) && !topic.hasSuffix(suffix)
    }

    private static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]

    private func verify(_ token: String?, keys: JWTKeyCollection) async -> MockAPNsRequest.Claims? {
        // Like APNs, check a provider token's signature once and remember it: a sender reuses
        // one token for up to an hour, and re-verifying every request would make the mock,
        // not the client, the bottleneck of a bench.
        if let token, let known = verified.withLockedValue({ $0[token] }) { return known }
        guard let token, let segments = JWTSegments.decode(token),
            let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: segments.header),
            // Decoding `iat` as Int refuses a fractional NumericDate, which APNs rejects.
            let raw = try? JSONDecoder().decode(RawClaims.self, from: segments.payload),
            (try? await keys.verify(token, as: VerifiedClaims.self)) != nil
        else { return nil }
        let claims = MockAPNsRequest.Claims(keyID: header.kid ?? "", algorithm: header.alg ?? "", issuer: raw.iss, issuedAt: raw.iat)
        verified.withLockedValue { $0[token] = claims }
        return claims
    }

    /// Apple echoes the sender's `apns-id`, or makes one.
    private static func response(for answer: MockAPNsAnswer, now: Date, apnsID: String?) -> Response {
        var headers: HTTPFields = [:]
        headers[.init("apns-id")!] = apnsID ?? UUID().uuidString
        if let retryAfter = answer.retryAfter {
            headers[.init("retry-after")!] = String(retryAfter)
        }
        guard let reason = answer.reason else {
            return Response(status: .init(code: answer.status), headers: headers)
        }
        headers[.contentType] = "application/json"
        var json = "{\"reason\":\"\(reason)\""
        if answer.status == 410 {
            json += ",\"timestamp\":\(Int64(now.timeIntervalSince1970 * 1000))"
        }
        json += "}"
        return Response(
            status: .init(code: answer.status),
            headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: json))
        )
    }
}

/// The claims as they are on the wire, decoded strictly.
private struct RawClaims: Decodable {
    var iss: String
    var iat: Int
}

/// The claims for jwt-kit's signature check; the mock checks their values itself.
private struct VerifiedClaims: JWTPayload {
    var iss: IssuerClaim
    var iat: IssuedAtClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Apple's rule that a key's provider token may not change more often than every 20 minutes
/// (429 `TooManyProviderTokenUpdates`), however many senders use the key. A token APNs itself
/// rejected may be replaced at once.
actor ProviderTokenUpdates {
    private struct Current {
        var token: String
        var since: Date
        var rejected = false
    }

    private var current: [String: Current] = [:]
    /// Every token accepted as a key's new one, by key id, in order.
    private(set) var accepted: [String: [String]] = [:]

    func use(_ token: String, keyID: String, at now: Date) -> MockAPNsAnswer? {
        if let current = current[keyID] {
            guard token != current.token else { return nil }
            if !current.rejected, now.timeIntervalSince(current.since) < 20 * 60 {
                return MockAPNsAnswer(status: 429, reason: "TooManyProviderTokenUpdates")
            }
        }
        current[keyID] = Current(token: token, since: now)
        accepted[keyID, default: []].append(token)
        return nil
    }

    func rejected(_ token: String, keyID: String) {
        if current[keyID]?.token == token { current[keyID]?.rejected = true }
    }
}
