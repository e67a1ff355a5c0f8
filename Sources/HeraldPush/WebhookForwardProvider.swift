import AsyncHTTPClient
import Foundation
import HeraldWire
import Logging
import NIOCore

/// POSTs a JSON body to another service's webhook (an NWC request forwarded as breez-lnurl
/// forwards it, to the wallet's own notification service), with the outbox's retries and dead
/// letters. The connection is Web Push's: https unless allowed otherwise, public addresses only
/// unless allowed otherwise, checked again at connect time.
public struct WebhookForwardProvider: PushProvider {
    public var name: String { "webhook" }
    /// The data key holding the body.
    public static let bodyKey = "body"

    private let client: EgressHTTPClient
    private let policy: WebPushPolicy

    public init(httpClient: PushHTTPClient, policy: WebPushPolicy) {
        self.client = httpClient.webPushClient
        self.policy = policy
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard target.destination == .webhook else { throw PushValidationError(.invalidMessage, message: "a webhook job goes to a webhook URL") }
        try PushTokenForm.check(target.token, destination: .webhook)
        if !policy.allowInsecureEndpoints, URL(string: target.token)?.scheme?.lowercased() != "https" {
            throw PushValidationError(.invalidMessage, message: "a webhook URL is https (webpush.allow_insecure_endpoints allows http)")
        }
        guard let body = message.data[Self.bodyKey], body.utf8.first == UInt8(ascii: "{") else {
            throw PushValidationError(.invalidMessage, message: "a webhook job carries its JSON body")
        }
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger: Logger) async -> PushOutcome {
        do {
            try validate(message, for: target)
        } catch {
            return .refused(error, service: name, logger: logger)
        }
        let host = URL(string: target.token)?.host ?? ""
        var request = HTTPClientRequest(url: target.token)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: message.data[Self.bodyKey] ?? "{}"))
        do {
            let (response, body) = try await client.execute(request, host: host, timeout: policy.timeout, maxBody: 1024)
            let status = Int(response.status.code)
            let said = String(buffer: body).prefix(200).replacingOccurrences(of: "\n", with: " ")
            switch status {
            case 200..<300: return PushOutcome(kind: .delivered, status: status)
            case 408, 425, 429, 500..<600:
                return PushOutcome(
                    kind: .retry, reason: "http_\(status)", status: status,
                    retryAfter: RetryAfter.parse(response.headers.first(name: "Retry-After"), now: Date()))
            default:
                return PushOutcome(kind: .permanent, reason: said.isEmpty ? "http_\(status)" : "http_\(status): \(said)", status: status)
            }
        } catch is EgressHTTPClient.AddressRefused {
            logger.warning("webhook refused: it resolves to a non-public address", metadata: ["webhook.host": "\(host)"])
            return PushOutcome(kind: .permanent, reason: "private_endpoint")
        } catch {
            logger.notice("webhook post failed; will retry", metadata: ["webhook.host": "\(host)", "error": "\(error)"])
            return PushOutcome(kind: .retry, reason: "network_error")
        }
    }
}
