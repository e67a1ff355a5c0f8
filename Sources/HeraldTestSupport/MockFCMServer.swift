import Foundation
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import JWTKit
import Logging
import NIOCore

/// A local look-alike of Google's OAuth2 token endpoint and FCM HTTP v1, in one server on
/// 127.0.0.1: HTTP/2 over TLS when given a certificate, plain HTTP/1.1 otherwise.
///
/// - `POST /token` takes the JWT-bearer grant, verifies the RS256 assertion with the service
///   account's public key (`kid`, `iss`, `aud` = this endpoint, the messaging `scope`, integer
///   `iat`/`exp` at most an hour apart) and issues a random access token for an hour.
/// - `POST /v1/projects/{project}/messages:send` needs an unexpired token it issued, the
///   configured project, a `message` with a `token`, string-only `data`, a valid
///   `android.priority` and at most 4096 bytes besides the token.
///
/// Make the service account with ``makeServiceAccount(clientEmail:)`` once the server runs:
/// its `token_uri` must point here.
public struct MockFCMServer: Sendable {
    /// What the send endpoint received, in order.
    public let messages = RequestLog<MockFCMRequest>()
    /// What the token endpoint received, in order.
    public let tokenRequests = RequestLog<MockOAuthRequest>()
    /// Send answers scripted per registration token.
    public let script = AnswerScript<MockFCMAnswer>()
    /// Token-endpoint answers scripted per service-account email.
    public let tokenScript = AnswerScript<MockOAuthAnswer>()
    /// Connections and concurrent streams the client used on the send endpoint.
    public let connections = ConnectionStats()

    public let projectID: String
    let certificate: TestCertificate?
    let now: @Sendable () -> Date
    let responseDelay: Duration?
    let state = MockGoogleState()

    /// The scope FCM needs.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// - Parameters:
    ///   - certificate: Serve HTTP/2 over TLS with it; nil serves plain HTTP/1.1.
    ///   - now: The clock for assertion and access-token lifetimes; share the provider's.
    ///   - responseDelay: Hold every send answer this long (to see streams overlap).
    public init(
        projectID: String = "herald-test",
        certificate: TestCertificate? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        responseDelay: Duration? = nil
    ) {
        self.projectID = projectID
        self.certificate = certificate
        self.now = now
        self.responseDelay = responseDelay
    }

    /// Access tokens issued so far.
    public var issuedTokenCount: Int {
        get async { await state.issuedCount }
    }

    /// Makes every access token issued so far unusable (the send endpoint answers 401).
    public func revokeAccessTokens() async {
        await state.revokeAll()
    }

    /// A fresh service account whose `token_uri` is this server's token endpoint, trusted by
    /// it. Call after ``start(logger:)``.
    public func makeServiceAccount(
        clientEmail: String = "herald-push@herald-test.iam.gserviceaccount.com"
    ) async throws -> TestServiceAccount {
        guard let baseURL = await state.tokenBaseURL else { throw MockServerError.didNotStart }
        let account = try TestKeys.serviceAccount(
            tokenURI: "\(baseURL)/token",
            projectID: projectID,
            clientEmail: clientEmail
        )
        await state.trust(account)
        return account
    }

    /// Starts listening on 127.0.0.1 (a free port). Stop it with ``RunningMockServer/stop(timeout:)``.
    public func start(
        logger: Logger = Logger(label: "mock-fcm", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        let router = Router(context: MockRequestContext.self)
        router.post("/token") { request, _ in
            try await self.issueToken(request)
        }
        router.post("/v1/projects/:project/messages:send") { request, context in
            try await connections.tracking(context) { connection in
                try await self.receiveMessage(request, context: context, connection: connection)
            }
        }
        let tls = try certificate?.serverTLSConfiguration()
        let running = try await RunningMockServer.start(
            router: router, server: try tls.map { try .http2Upgrade(tlsConfiguration: $0) } ?? .http1(), tls: tls != nil, logger: logger)
        await state.setBaseURL(running.baseURL)
        return running
    }

    /// Starts a second listener that serves only the token endpoint, over TLS and HTTP/1.1 only
    /// (no ALPN `h2`), as a gateway in front of Google's might; service accounts made after it
    /// point their `token_uri` there. Call after ``start(logger:)``; stop both.
    public func startHTTP1TokenEndpoint(
        logger: Logger = Logger(label: "mock-oauth-http1", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RunningMockServer {
        guard let certificate else { throw MockServerError.didNotStart }
        let router = Router(context: MockRequestContext.self)
        router.post("/token") { request, _ in try await self.issueToken(request) }
        let tls = try certificate.serverTLSConfiguration()
        let running = try await RunningMockServer.start(router: router, server: try .tls(.http1(), tlsConfiguration: tls), tls: true, logger: logger)
        await state.setTokenBaseURL(running.baseURL)
        return running
    }

    /// Runs the server for the duration of `body`.
    public func withRunning<T: Sendable>(_ body: (RunningMockServer) async throws -> T) async throws -> T {
        try await withStarted({ try await start() }, stop: { await $0.stop() }, body)
    }

    // MARK: Send endpoint

    private func receiveMessage(_ request: Request, context: MockRequestContext, connection: Int) async throws -> Response {
        let arrival = Date()
        let body = Data(try await request.body.collect(upTo: 64 * 1024).readableBytesView)
        let headers = request.headersByName
        let project = context.parameters.get("project") ?? ""
        let accessToken = bearerToken(headers["authorization"])
        let message = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["message"] as? [String: Any]
        let registrationToken = message?["token"] as? String

        var answer: MockFCMAnswer? = nil
        if let accessToken, await state.isValid(accessToken, at: now()) {
            answer = check(project: project, message: message)
        } else {
            answer = .unauthenticated
        }
        if answer == nil, let registrationToken {
            answer = await script.next(for: registrationToken)
        }
        let final = answer ?? .success
        await messages.append(
            MockFCMRequest(
                projectID: project,
                headers: headers,
                body: body,
                arrival: arrival,
                registrationToken: registrationToken,
                accessToken: accessToken,
                connection: connection,
                answer: final
            )
        )
        if let responseDelay {
            try await Task.sleep(for: responseDelay)
        }
        return response(for: final)
    }

    /// The first rule the message breaks, as FCM would answer; nil when it is acceptable.
    private func check(project: String, message: [String: Any]?) -> MockFCMAnswer? {
        let invalid = { (text: String) in
            MockFCMAnswer(status: 400, rpcStatus: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", message: text)
        }
        guard project == projectID else {
            return MockFCMAnswer(status: 403, rpcStatus: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH", message: "SenderId mismatch")
        }
        guard var message else { return invalid("Invalid JSON payload received. Unknown name \"message\".") }
        guard let token = message["token"] as? String, !token.isEmpty else {
            return invalid("Recipient of the message is not set.")
        }
        if let data = message["data"] {
            guard let map = data as? [String: Any], map.values.allSatisfy({ $0 is String }) else {
                return invalid("Invalid value at 'message.data' (TYPE_STRING): every data value must be a string.")
            }
        }
        if let android = message["android"] as? [String: Any], let priority = android["priority"] {
            guard let priority = priority as? String, ["HIGH", "NORMAL"].contains(priority) else {
                return invalid("Invalid value at 'message.android.priority'.")
            }
        }
        message["token"] = nil
        let size = (try? JSONSerialization.data(withJSONObject: message))?.count ?? 0
        guard size <= 4096 else { return invalid("Message is too big") }
        return nil
    }

    private func response(for answer: MockFCMAnswer) -> Response {
        guard answer.status != 200 else {
            return Self.json(["name": "projects/\(projectID)/messages/0:\(UUID().uuidString)"], status: 200)
        }
        var details: [ErrorBody.Detail] = []
        if let errorCode = answer.errorCode {
            details.append(.init(type: "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: errorCode))
        }
        var response = Self.json(
            ErrorBody(error: .init(code: answer.status, message: answer.message, status: answer.rpcStatus, details: details)),
            status: answer.status
        )
        if let retryAfter = answer.retryAfter {
            response.headers[.init("retry-after")!] = String(retryAfter)
        }
        return response
    }

    private struct ErrorBody: Encodable {
        struct Status: Encodable {
            var code: Int
            var message: String?
            var status: String?
            var details: [Detail]
        }
        struct Detail: Encodable {
            var type: String
            var errorCode: String
            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case errorCode
            }
        }
        var error: Status
    }

    static func json(_ value: some Encodable, status: Int) -> Response {
        let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(
            status: .init(code: status),
            headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
