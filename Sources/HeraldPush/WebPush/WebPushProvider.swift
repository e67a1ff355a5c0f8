import AsyncHTTPClient
import Foundation
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// One app's Web Push sender identity: the VAPID key (RFC 8292) and the contact push services
/// may write to about its traffic.
public struct WebPushConfiguration: Sendable {
    /// PKCS#8 or SEC1 PEM of a P-256 key (`herald webpush keygen` makes one).
    public var vapidKeyPEM: String
    /// `mailto:` or `https:` URL: the JWT's `sub`.
    public var contact: String

    public init(vapidKeyPEM: String, contact: String) {
        self.vapidKeyPEM = vapidKeyPEM
        self.contact = contact
    }
}

/// Which endpoints Web Push may reach, and how hard: the same for every app.
public struct WebPushPolicy: Sendable, Hashable {
    /// Plain `http://` endpoints, for local development only.
    public var allowInsecureEndpoints = false
    /// Endpoints on loopback, private, link-local or multicast addresses (tests, a distributor
    /// on the operator's own network).
    public var allowPrivateEndpoints = false
    /// Requests in flight to one push service at most.
    public var concurrencyPerOrigin = 8
    /// From the request's start to the end of the answer.
    public var timeout: Duration = .seconds(30)

    public init(allowInsecureEndpoints: Bool = false, allowPrivateEndpoints: Bool = false, concurrencyPerOrigin: Int = 8) {
        self.allowInsecureEndpoints = allowInsecureEndpoints
        self.allowPrivateEndpoints = allowPrivateEndpoints
        self.concurrencyPerOrigin = concurrencyPerOrigin
    }
}

/// Sends pushes as Web Push messages (RFC 8030): the data map encrypted to the subscription
/// (RFC 8291, `aes128gcm`), authorised by VAPID (RFC 8292), to the endpoint the device
/// registered: a UnifiedPush distributor, Mozilla's, Google's or Apple's push service.
public struct WebPushProvider: PushProvider {
    public var name: String { "webpush" }

    public let signer: VAPIDSigner
    public let policy: WebPushPolicy
    /// The https URL a declarative notification opens (`webpush.navigate_url`); nil sends
    /// subscriptions that asked for the declarative form the plain one, as WebKit takes no
    /// declarative message without an https `navigate`.
    public let navigateURL: String?
    private let client: EgressHTTPClient
    private let gate: OriginGate
    private let warned = OncePerKey(limit: 1024)
    private let now: @Sendable () -> Date

    /// - Throws: ``PushConfigurationError`` when the VAPID key or contact is unusable.
    public init(
        configuration: WebPushConfiguration,
        policy: WebPushPolicy,
        navigateURL: String? = nil,
        httpClient: PushHTTPClient,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(PushConfigurationError) {
        self.signer = try VAPIDSigner(privateKeyPEM: configuration.vapidKeyPEM, contact: configuration.contact)
        self.policy = policy
        self.navigateURL = navigateURL
        self.client = httpClient.webPushClient
        self.gate = OriginGate(limit: policy.concurrencyPerOrigin)
        self.now = now
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        _ = try checked(message, for: target)
    }

    /// The subscription, read once from the token and held to the policy, and the plaintext,
    /// rendered once and within the size limit: what ``validate(_:for:)`` judges and a send uses.
    private func checked(
        _ message: PushMessage, for target: PushTarget
    ) throws(PushValidationError) -> (subscription: WebPushSubscription.Checked, plaintext: Data) {
        guard target.destination == .device(.webpush) else {
            throw PushValidationError(.invalidMessage, message: "Herald sends Web Push messages to webpush devices only")
        }
        let subscription = try PushTokenForm.webPushSubscription(target.token, allowInsecure: policy.allowInsecureEndpoints)
        let navigate = subscription.declarative ? navigateURL : nil
        return (subscription, try WebPushPayload.plaintext(message, navigate: navigate))
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        let subscription: WebPushSubscription.Checked
        let body: Data
        do {
            let checked = try checked(message, for: target)
            subscription = checked.subscription
            body = try WebPushMessage.encrypt(checked.plaintext, to: subscription.p256dh, authSecret: subscription.auth)
        } catch {
            return .refused(error, service: name, logger: logger)
        }
        let endpoint = subscription.endpoint
        let host = endpoint.host ?? ""
        let origin = VAPIDSigner.origin(of: endpoint) ?? host
        let authorization: String
        do {
            authorization = try await signer.authorization(for: endpoint, now: now())
        } catch {
            logger.error("VAPID header could not be signed", metadata: ["error.type": "\(type(of: error))"])
            return PushOutcome(kind: .retry, reason: "vapid_signing_failed")
        }
        var request = HTTPClientRequest(url: endpoint.absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "TTL", value: String(WebPushPayload.ttl(message, now: now())))
        request.headers.add(name: "Urgency", value: WebPushPayload.urgency(message))
        if let topic = WebPushPayload.topic(message) { request.headers.add(name: "Topic", value: topic) }
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .bytes(ByteBuffer(bytes: body))
        let policy = self.policy
        let client = self.client
        let answer = await gate.run(origin: origin) { () -> Result<(HTTPClientResponse, ByteBuffer), any Error> in
            do {
                return .success(try await client.execute(request, host: host, timeout: policy.timeout, maxBody: 1024))
            } catch {
                return .failure(error)
            }
        }
        guard let answer else { return PushOutcome(kind: .retry, reason: "cancelled") }
        switch answer {
        case .failure(let error):
            return outcome(of: error, origin: origin, logger: logger)
        case .success(let (response, responseBody)):
            return outcome(of: response, body: responseBody, origin: origin, logger: logger)
        }
    }

    private func outcome(of error: any Error, origin: String, logger: Logger) -> PushOutcome {
        if error is EgressHTTPClient.AddressRefused {
            logger.warning("Web Push endpoint refused: it resolves to a non-public address", metadata: ["push.origin": "\(origin)"])
            return PushOutcome(kind: .permanent, reason: "private_endpoint")
        }
        let reason: String
        switch error {
        case let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout: reason = "timeout"
        case let error as HTTPClientError where error == .connectTimeout: reason = "connect_timeout"
        default: reason = "network_error"
        }
        logger.notice(
            "Web Push send failed; will retry",
            metadata: ["push.origin": "\(origin)", "error.type": "\(type(of: error))", "error": "\(error)"])
        return PushOutcome(kind: .retry, reason: reason)
    }

    private func outcome(of response: HTTPClientResponse, body: ByteBuffer, origin: String, logger: Logger) -> PushOutcome {
        let status = Int(response.status.code)
        let retryAfter = RetryAfter.parse(response.headers.first(name: "Retry-After"), now: now())
        // What the service said, for the dead letter: short, and one line.
        let said = String(buffer: body).prefix(200).replacingOccurrences(of: "\n", with: " ")
        func reason(_ code: String) -> String { said.isEmpty ? code : "\(code): \(said)" }
        switch status {
        case 200..<300:
            return PushOutcome(kind: .delivered, status: status, providerMessageID: response.headers.first(name: "Location"))
        case 404, 410:
            return PushOutcome(kind: .tokenDead, reason: status == 410 ? "Gone" : "NotFound", status: status)
        case 401, 403:
            // The service does not take our VAPID key or contact: every push to it fails alike
            // until the operator acts, so say it once per origin, and keep the pushes.
            if warned.first(origin) {
                logger.error(
                    "Web Push service refused Herald's VAPID authorization: check webpush.vapid_key_file and webpush.contact",
                    metadata: ["push.origin": "\(origin)", "http.status": "\(status)", "push.answer": "\(said)"])
            }
            return PushOutcome(
                kind: .retry, reason: status == 401 ? "Unauthorized" : "Forbidden", status: status, retryAfter: retryAfter ?? .seconds(60))
        case 429, 500..<600:
            return PushOutcome(kind: .retry, reason: status == 429 ? "TooManyRequests" : "ServiceUnavailable", status: status, retryAfter: retryAfter)
        case 300..<400:
            // Never followed: the endpoint is what the device registered, and a redirect could
            // point anywhere.
            return PushOutcome(kind: .permanent, reason: reason("redirect_refused"), status: status)
        case 413:
            return PushOutcome(kind: .permanent, reason: reason("payload_too_large"), status: status)
        default:
            return PushOutcome(kind: .permanent, reason: reason("rejected_\(status)"), status: status)
        }
    }
}

/// Remembers keys seen, to do something once per key; forgets them all past `limit` (the keys
/// are origins registrations choose).
final class OncePerKey: Sendable {
    private let seen = NIOLockedValueBox(Set<String>())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// True the first time `key` is seen.
    func first(_ key: String) -> Bool {
        seen.withLockedValue { seen in
            if seen.count >= limit { seen.removeAll() }
            return seen.insert(key).inserted
        }
    }
}
