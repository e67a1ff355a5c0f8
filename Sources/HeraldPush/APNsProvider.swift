import Foundation
import HeraldWire
import Logging
import NIOCore
import NIOHPACK

/// Sends pushes to APNs over HTTP/2 with token-based (`.p8`) authentication.
///
/// Every send shares one provider token, signed on first use and replaced after
/// ``APNsConfiguration/tokenRefreshInterval`` or when APNs rejects it. The ``PushHTTPClient``
/// is the caller's: it keeps long-lived HTTP/2 connections to APNs and multiplexes concurrent
/// sends over them.
public struct APNsProvider: PushProvider {
    public var name: String { "apns" }

    public let configuration: APNsConfiguration
    private let endpoint: PushEndpoint
    /// `/3/device/` after whatever path a custom base URL has.
    private let devicePath: String
    private let tokens: BearerTokenCache
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - sharing: Shares the provider token with the other processes on the database.
    ///   - now: The clock for token age and `apns-expiration`; tests inject one to jump ahead.
    /// - Throws: ``PushConfigurationError`` when the signing key does not parse or the base URL
    ///   is not an http(s) URL.
    public init(
        configuration: APNsConfiguration,
        httpClient: PushHTTPClient,
        sharing: TokenSharing? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(PushConfigurationError) {
        let signer = try APNsProviderTokenSigner(configuration: configuration)
        let refreshInterval = TimeInterval(configuration.tokenRefreshInterval.components.seconds)
        self.configuration = configuration
        do {
            self.endpoint = try httpClient.endpoint(configuration.environment.baseURL)
        } catch {
            throw PushConfigurationError(message: "APNs URL: \(error)")
        }
        self.devicePath = PushOrigin.path(of: configuration.environment.baseURL) + "/3/device/"
        self.now = now
        self.tokens = BearerTokenCache(now: now, sharing: sharing, key: Self.sharingKey(configuration)) {
            let signed = try await signer.sign(now: now())
            return .init(value: signed.token, refreshAt: signed.issuedAt.addingTimeInterval(refreshInterval))
        }
    }

    /// One token per signing key, whichever app (topic) uses it: Apple counts updates per key.
    static func sharingKey(_ configuration: APNsConfiguration) -> String {
        "apns:\(configuration.teamID):\(configuration.keyID)"
    }

    /// Its connections to the push service and the age of its bearer token.
    public var status: PushProviderStatus {
        PushProviderStatus(name: name, openConnections: endpoint.openConnections, tokenIssuedAt: tokens.issuedAt, usesToken: true)
    }

    public func validate(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) {
        _ = try checkedBody(message, for: target)
    }

    /// Validates and renders in one pass: the size check already has the bytes to send.
    private func checkedBody(_ message: PushMessage, for target: PushTarget) throws(PushValidationError) -> Data {
        guard target.destination == .device(.ios) else {
            throw PushValidationError(.invalidMessage, message: "APNs delivers to iOS devices only")
        }
        try PushTokenForm.check(target.token, platform: .ios)
        return try APNsPayload.validate(message)
    }

    public func send(_ message: PushMessage, to target: PushTarget, logger baseLogger: Logger) async -> PushOutcome {
        var logger: Logger { baseLogger.forPush(service: "apns", to: target) }
        let body: Data
        do {
            body = try checkedBody(message, for: target)
        } catch {
            return .refused(error, service: "apns", logger: logger)
        }
        guard let token = await providerToken(logger: logger) else { return Self.signingFailed }
        let request = makeRequest(message, token: target.token, providerToken: token, body: body)
        let answer: Result<PushHTTPResponse, any Error>
        do {
            answer = .success(try await endpoint.execute(request, timeout: configuration.requestTimeout))
        } catch {
            answer = .failure(error)
        }
        return await outcome(of: answer, providerToken: token, logger: logger, verbose: baseLogger.logLevel <= .debug)
    }

    /// The shared provider token; nil, logged, when it cannot be signed.
    private func providerToken(logger: @autoclosure () -> Logger) async -> String? {
        do {
            return try await tokens.token()
        } catch {
            // Signing with a key that parsed cannot fail for a reason a retry would fix.
            logger().error("apns provider token could not be signed", metadata: ["error.type": "\(type(of: error))"])
            return nil
        }
    }

    private static let signingFailed = PushOutcome(kind: .permanent, reason: "provider_token_signing_failed")

    /// All of `messages` on one connection, each request's stream opened after the one before
    /// (``PushEndpoint/executeInOrder(_:timeout:)``): APNs sees a wake's silent push before its
    /// alert without the alert waiting for the silent push's answer.
    public func send(inOrder messages: [PushMessage], to target: PushTarget, logger baseLogger: Logger) async -> [PushOutcome] {
        var logger: Logger { baseLogger.forPush(service: "apns", to: target) }

        // A message that cannot be rendered is refused on its own; the others still go.
        var outcomes = [PushOutcome?](repeating: nil, count: messages.count)
        var bodies: [(index: Int, body: Data)] = []
        for (index, message) in messages.enumerated() {
            do {
                bodies.append((index, try checkedBody(message, for: target)))
            } catch {
                outcomes[index] = .refused(error, service: "apns", logger: logger)
            }
        }
        guard !bodies.isEmpty else { return outcomes.map { $0! } }
        guard let token = await providerToken(logger: logger) else { return outcomes.map { $0 ?? Self.signingFailed } }

        let requests = bodies.map { makeRequest(messages[$0.index], token: target.token, providerToken: token, body: $0.body) }
        let answers = await endpoint.executeInOrder(requests, timeout: configuration.requestTimeout)
        for ((index, _), answer) in zip(bodies, answers) {
            outcomes[index] = await outcome(of: answer, providerToken: token, logger: logger, verbose: baseLogger.logLevel <= .debug)
        }
        return outcomes.map { $0! }
    }

    private func outcome(
        of answer: Result<PushHTTPResponse, any Error>, providerToken token: String, logger: @autoclosure () -> Logger,
        verbose: Bool
    ) async -> PushOutcome {
        let response: PushHTTPResponse
        switch answer {
        case .success(let value): response = value
        case .failure(let error):
            TransportFailure.log(error, service: name, logger: logger())
            return TransportFailure.outcome(for: error)
        }
        // A success has no body: skip the decoder (a failed decode throws, which costs).
        let reason =
            response.body.readableBytes == 0
            ? nil : try? WireJSON.decode(APNsErrorBody.self, from: Data(response.body.readableBytesView)).reason
        let outcome = APNsResponse.outcome(
            status: response.status,
            reason: reason,
            retryAfter: response.status == 200 ? nil : RetryAfter.parse(response.headers.first(name: "retry-after"), now: now()),
            apnsID: response.headers.first(name: "apns-id")
        )
        if response.status == 403, let reason, APNsResponse.providerTokenReasons.contains(reason) {
            await tokens.invalidate(token)
        }
        // The scoped logger only when something is logged: each metadata key set makes the
        // standard handler render all of its metadata again, five allocations per push.
        if outcome.kind != .delivered || verbose {
            outcome.log(logger: logger())
        }
        return outcome
    }

    private func makeRequest(
        _ message: PushMessage,
        token deviceToken: String,
        providerToken: String,
        body: Data
    ) -> PushHTTPRequest {
        var headers = HPACKHeaders()
        headers.reserveCapacity(8)
        headers.add(name: "authorization", value: "bearer " + providerToken)
        if let stored = message.verbatim?.apnsHeaders {
            // Written by `APNsHeaders` when the push was rendered, with no topic: sent as stored,
            // after the provider's own topic. ActivityKit's pushes go to the app's Live Activity
            // topic, not its own.
            let liveActivity = stored.contains { $0 == ["apns-push-type", LiveActivityPayload.pushType] }
            Self.add("apns-topic", liveActivity ? LiveActivityPayload.topic(bundleID: configuration.topic) : configuration.topic, to: &headers)
            for header in stored where header.count == 2 && header[0] != "apns-topic" {
                Self.add(header[0], header[1], to: &headers)
            }
        } else {
            let apns = APNsHeaders(
                topic: configuration.topic,
                // 0 means "deliver now or never": without an expiry APNs does not store the push.
                expiration: message.expiresAt.map { max(0, Int64($0.timeIntervalSince1970.rounded(.down))) } ?? 0,
                pushType: message.kind == .background ? .background : .alert,
                collapseID: message.collapseID)
            apns.write { Self.add($0, $1, to: &headers) }
        }
        headers.add(name: "content-type", value: "application/json")
        return PushHTTPRequest(path: devicePath + deviceToken, headers: headers, body: ByteBuffer(bytes: body))
    }

    /// Values that repeat (the bearer token for 40 minutes, the topic, the push type) go into the
    /// connection's HPACK table and cost a byte or two after the first send; values that change
    /// per push are sent literally so they do not evict them.
    private static func add(_ name: String, _ value: String, to headers: inout HPACKHeaders) {
        let repeats: Bool
        switch name {
        case "apns-topic", "apns-push-type", "apns-priority": repeats = true
        case "apns-expiration": repeats = value == "0"
        default: repeats = false
        }
        headers.add(name: name, value: value, indexing: repeats ? .indexable : .nonIndexable)
    }
}
