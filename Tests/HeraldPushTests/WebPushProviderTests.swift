import Crypto
import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Logging
import Testing

/// A Web Push look-alike and a `WebPushProvider` pointed at it.
struct WebPushFixture {
    let clock = TestClock(Date())
    let certificate: TestCertificate
    let server: MockWebPushServer
    let vapidPEM = VAPIDSigner.makeKeyPEM()

    init(http1Only: Bool = false, responseDelay: Duration? = nil) throws {
        certificate = try TestCertificate.make()
        server = MockWebPushServer(certificate: certificate, http1Only: http1Only, now: clock.function, responseDelay: responseDelay)
    }

    func run<T: Sendable>(
        policy: WebPushPolicy = WebPushPolicy(allowPrivateEndpoints: true),
        proxy: EgressProxy? = nil,
        navigateURL: String? = nil,
        _ body: (WebPushProvider, MockWebPushSubscription) async throws -> T
    ) async throws -> T {
        try await server.withRunning { _ in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            let subscription = try await server.makeSubscription()
            return try await withPushHTTPClient(
                trusting: caFile, proxy: proxy, allowPrivateWebPushEndpoints: policy.allowPrivateEndpoints
            ) { client in
                let provider = try WebPushProvider(
                    configuration: WebPushConfiguration(vapidKeyPEM: vapidPEM, contact: "mailto:ops@wallet.example"),
                    policy: policy, navigateURL: navigateURL, httpClient: client, now: clock.function)
                return try await body(provider, subscription)
            }
        }
    }
}

@Suite("Web Push provider, on the wire")
struct WebPushProviderTests {
    static func target(_ subscription: MockWebPushSubscription) -> PushTarget {
        PushTarget(platform: .webpush, token: subscription.subscription.storageToken)
    }

    @Test("a wake is one Urgency: high message whose plaintext is the FCM data map, over HTTP/2 and over HTTP/1.1 only", arguments: [false, true])
    func wake(http1Only: Bool) async throws {
        let fixture = try WebPushFixture(http1Only: http1Only)
        let message = PushMessage.wake(swapUpdateData, collapseID: "swap-0a1b2c", expiresAt: fixture.clock.now.addingTimeInterval(600))
        let outcome = try await fixture.run { provider, subscription in
            // The push service named by its IP address over TLS, as a self-hosted distributor may be.
            #expect(subscription.subscription.endpoint.hasPrefix("https://127.0.0.1:"))
            let outcome = await provider.send(message, to: Self.target(subscription), logger: testLogger)
            return outcome
        }
        #expect(outcome.kind == .delivered)
        #expect(outcome.status == 201)
        #expect(outcome.providerMessageID?.contains("/message/") == true)
        let received = try #require(await fixture.server.messages.all.first)
        #expect(received.answer == .created)
        #expect(received.urgency == "high")
        #expect(received.ttl == 600)
        #expect(received.topic == "swap-0a1b2c")
        #expect(received.vapidSubject == "mailto:ops@wallet.example")
        #expect(received.vapidKey == (try VAPIDSigner(privateKeyPEM: fixture.vapidPEM, contact: "mailto:x@y")).publicKey)
        #expect(received.headers["content-type"] == "application/octet-stream")
        let plaintext = try #require(received.plaintext)
        #expect(plaintext == (try FCMPayload.renderData(message)))
        #expect(
            String(decoding: plaintext, as: UTF8.self)
                == #"{"app_data":"wallet-7","notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"}"#
        )
    }

    @Test("a backend alert is Urgency: normal; a long collapse id becomes a 32-character base64url Topic")
    func normalAndTopic() async throws {
        let fixture = try WebPushFixture()
        let message = PushMessage(
            kind: .alert, data: ["k": "v"], alert: .init(title: "t", body: "b"),
            collapseID: "a collapse id with spaces that is much longer than thirty-two characters")
        _ = try await fixture.run { provider, subscription in
            await provider.send(message, to: Self.target(subscription), logger: testLogger)
        }
        let received = try #require(await fixture.server.messages.all.first)
        #expect(received.answer == .created)
        #expect(received.urgency == "normal")
        #expect(received.topic?.count == 32)
        #expect(received.ttl == WebPushPayload.defaultTTL)
        // The text travels with the data, as FCM's `notification` does beside its `data`.
        #expect(received.plaintext.map { String(decoding: $0, as: UTF8.self) } == #"{"k":"v","notification":{"body":"b","title":"t"}}"#)
    }

    @Test("answers: 404 and 410 dead, 413 and other 4xx permanent with the service's words, 429 and 5xx retried with Retry-After, 401/403 retried")
    func answers() async throws {
        let fixture = try WebPushFixture()
        let cases: [(MockWebPushAnswer, PushOutcome.Kind)] = [
            (.gone, .tokenDead), (.notFound, .tokenDead), (.tooLarge, .permanent),
            (MockWebPushAnswer(status: 400, body: "bad"), .permanent),
            (.tooManyRequests(retryAfter: 7), .retry), (MockWebPushAnswer(status: 503, retryAfter: 3), .retry),
            (MockWebPushAnswer(status: 403, body: "wrong key"), .retry), (MockWebPushAnswer(status: 301), .permanent),
        ]
        let outcomes = try await fixture.run { provider, subscription in
            await fixture.server.script.enqueue(cases.map(\.0), for: subscription.id)
            var outcomes: [PushOutcome] = []
            for _ in cases {
                outcomes.append(await provider.send(.wake(swapUpdateData), to: Self.target(subscription), logger: testLogger))
            }
            return outcomes
        }
        #expect(outcomes.map(\.kind) == cases.map(\.1))
        #expect(outcomes[2].reason == "payload_too_large: payload too large")
        #expect(outcomes[3].reason == "rejected_400: bad")
        #expect(outcomes[4].retryAfter == .seconds(7))
        #expect(outcomes[5].retryAfter == .seconds(3))
        #expect(outcomes[7].reason == "redirect_refused")
    }

    @Test("an endpoint on a private address is refused at connect time unless allowed: no message reaches it")
    func privateAddressAtConnect() async throws {
        let fixture = try WebPushFixture()
        let outcome = try await fixture.run(policy: WebPushPolicy(allowPrivateEndpoints: false)) { provider, subscription in
            await provider.send(.wake(swapUpdateData), to: Self.target(subscription), logger: testLogger)
        }
        #expect(outcome.kind == .permanent)
        #expect(outcome.reason == "private_endpoint")
        #expect(await fixture.server.messages.count == 0)
    }

    @Test("an http endpoint is refused unless allowed; a message over 4,096 encrypted bytes is refused before sending")
    func validation() async throws {
        let fixture = try WebPushFixture()
        try await fixture.run { provider, subscription in
            var insecure = subscription.subscription
            insecure.endpoint = insecure.endpoint.replacingOccurrences(of: "https:", with: "http:")
            #expect(throws: PushValidationError.self) {
                try provider.validate(.wake(swapUpdateData), for: PushTarget(platform: .webpush, token: insecure.storageToken))
            }
            let big = PushMessage(kind: .wake, data: ["blob": String(repeating: "x", count: WebPushPayload.maxPlaintextBytes)])
            #expect(
                throws: PushValidationError(
                    .payloadTooLarge,
                    message:
                        "the Web Push plaintext is \(WebPushPayload.maxPlaintextBytes + 11) bytes; a 4,096-byte encrypted Web Push body allows \(WebPushPayload.maxPlaintextBytes)"
                )
            ) {
                try provider.validate(big, for: Self.target(subscription))
            }
            let fits = PushMessage(kind: .wake, data: ["blob": String(repeating: "x", count: WebPushPayload.maxPlaintextBytes - 11)])
            let outcome = await provider.send(fits, to: Self.target(subscription), logger: testLogger)
            #expect(outcome.kind == .delivered)
            #expect(await fixture.server.messages.all.first?.bodyBytes == 4096)
        }
    }

    @Test("requests in flight to one origin stay under the cap")
    func perOriginCap() async throws {
        let fixture = try WebPushFixture(responseDelay: .milliseconds(100))
        var policy = WebPushPolicy(allowPrivateEndpoints: true, concurrencyPerOrigin: 2)
        policy.timeout = .seconds(20)
        let outcomes = try await fixture.run(policy: policy) { provider, subscription in
            await withTaskGroup(of: PushOutcome.self) { group in
                for _ in 0..<12 {
                    group.addTask { await provider.send(.wake(swapUpdateData), to: Self.target(subscription), logger: testLogger) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(outcomes.allSatisfy { $0.kind == .delivered })
        #expect(await fixture.server.messages.count == 12)
        // Exactly the cap: the sends did overlap, and never past it.
        #expect(await fixture.server.maxConcurrent == 2)
    }
}

/// Keeps every record logged through it, for the tests that count what was said.
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
    }

    private let lock = NSLock()
    private var stored: [Record] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var records: [Record] { lock.withLock { stored } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { stored.append(Record(level: event.level, message: "\(event.message)")) }
    }
}

@Suite("Web Push provider, refused authorization")
struct WebPushAuthorizationTests {
    @Test("401 and 403 are logged as a configuration problem once per push service, and every such push is retried")
    func loggedOnce() async throws {
        let fixture = try WebPushFixture()
        let handler = RecordingLogHandler()
        let logger = Logger(label: "webpush-test", factory: { _ in handler })
        let outcomes = try await fixture.run { provider, subscription in
            await fixture.server.script.enqueue(
                [MockWebPushAnswer(status: 403, body: "unknown key"), MockWebPushAnswer(status: 401), MockWebPushAnswer(status: 403)],
                for: subscription.id)
            var outcomes: [PushOutcome] = []
            for _ in 0..<3 {
                outcomes.append(await provider.send(.wake(swapUpdateData), to: WebPushProviderTests.target(subscription), logger: logger))
            }
            return outcomes
        }
        #expect(outcomes.map(\.kind) == [.retry, .retry, .retry])
        #expect(outcomes.allSatisfy { $0.retryAfter == .seconds(60) })
        let said = handler.records.filter { $0.level == .error && $0.message.contains("VAPID authorization") }
        #expect(said.count == 1)
    }
}
