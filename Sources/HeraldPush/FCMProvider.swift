import Foundation
import HeraldWire
import Logging
import NIOCore
import NIOHPACK

/// Sends pushes through FCM HTTP v1 with a service account.
///
/// One OAuth2 access token is shared by every send: fetched on first use (concurrent sends
/// wait for that one fetch), reused until ``FCMConfiguration/accessTokenRefreshMargin`` before
/// it expires, and dropped when FCM answers 401.
public struct FCMProvider: PushProvider {
    public var name: String { "fcm" }

    public let configuration: FCMConfiguration
    private let endpoint: PushEndpoint
    private let sendPath: String
    private let tokens: BearerTokenCache
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - sharing: Shares the access token with the other processes on the database.
    ///   - now: The clock for token expiry and `android.ttl`; tests inject one to jump ahead.
    /// - Throws: ``PushConfigurationError`` when the service account's key does not parse.
    public init(
        configuration: FCMConfiguration,
        httpClient: PushHTTPClient,
        sharing: TokenSharing? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(PushConfigurationError) {
        let source = try GoogleAccessTokenSource(configuration: configuration, httpClient: httpClient, now: now)
        self.configuration = configuration
        do {
            self.endpoint = try httpClient.endpoint(configuration.sendURL)
        } catch {
            throw PushConfigurationError(message: "FCM URL: \(error)")
        }
        self.sendPath = PushOrigin.path(of: configuration.sendURL)
        self.now = now
        self.tokens = BearerTokenCache(now: now, sharing: sharing, key: Self.sharingKey(configuration)) {
            try await source.fetch()
        }
    }

    /// One access token per service account, whichever app uses it.
    static func sharingKey(_ configuration: FCMConfiguration) -> String {
        "fcm:" + configuration.serviceAccount.clientEmail
    }

    /// Its connections to the push service and the age of its bearer token.
    public var status: PushProviderStatus {
        PushProviderStatus(name: name, openConnections: endpoint.openConnections, tokenIssuedAt: tokens.issuedAt, usesToken: true)
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        guard target.destination == .device(.android) else {
            throw PushValidationError(.invalidMessage, message: "Herald sends FCM pushes to Android devices only")
        }
        try PushTokenForm.check(target.token, platform: .android)
        try FCMPayload.validate(message, now: now())
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger baseLogger: Logger) async -> PushOutcome {
        var logger: Logger { baseLogger.forPush(service: "fcm", to: target) }

        let body: Data
        do {
            try validate(message, for: target)
            body = try FCMPayload.render(message, token: target.token, now: now())
        } catch {
            return .refused(error, service: "fcm", logger: logger)
        }

        let accessToken: String
        do {
            accessToken = try await tokens.token()
        } catch let error as AccessTokenError {
            let outcome = error.outcome
            logger.warning(
                "fcm access token refused",
                metadata: ["push.status": "\(error.status)", "push.reason": "\(outcome.reason ?? "-")"]
            )
            return outcome
        } catch {
            TransportFailure.log(error, service: "oauth", logger: logger)
            return TransportFailure.outcome(for: error)
        }

        var headers = HPACKHeaders()
        headers.reserveCapacity(2)
        headers.add(name: "authorization", value: "Bearer " + accessToken)
        headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        let request = PushHTTPRequest(path: sendPath, headers: headers, body: ByteBuffer(bytes: body))

        let mapped: FCMResponse.Mapped
        do {
            let response = try await endpoint.execute(request, timeout: configuration.requestTimeout)
            mapped = FCMResponse.map(
                status: response.status,
                body: Data(response.body.readableBytesView),
                retryAfter: RetryAfter.parse(response.headers.first(name: "retry-after"), now: now())
            )
        } catch {
            TransportFailure.log(error, service: name, logger: logger)
            return TransportFailure.outcome(for: error)
        }
        if mapped.dropAccessToken {
            await tokens.invalidate(accessToken)
        }

        let outcome = mapped.outcome
        if outcome.kind != .delivered || baseLogger.logLevel <= .debug {
            outcome.log(logger: logger)
        }
        return outcome
    }
}
