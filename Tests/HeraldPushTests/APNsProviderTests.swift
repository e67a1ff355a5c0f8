import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Testing

@Suite("APNs provider, on the wire")
struct APNsProviderTests {
    @Test("a wake push arrives with Apple's headers and the Breez keys beside aps")
    func wakePush() async throws {
        let fixture = try APNsFixture()
        let token = deviceToken(1)
        let message = PushMessage.wake(
            swapUpdateData,
            collapseID: "swap-0a1b2c",
            expiresAt: Date(timeIntervalSince1970: 1_750_003_600)
        )

        let outcome = try await fixture.run { provider in
            await provider.send(message, to: PushTarget(platform: .ios, token: token), logger: testLogger)
        }

        #expect(outcome.kind == .delivered)
        #expect(outcome.providerMessageID?.isEmpty == false)
        let request = try #require(await fixture.server.requests.all.first)
        #expect(request.accepted)
        #expect(request.deviceToken == token)
        #expect(request.headers["apns-topic"] == APNsFixture.topic)
        #expect(request.headers["apns-push-type"] == "alert")
        #expect(request.headers["apns-priority"] == "10")
        #expect(request.headers["apns-expiration"] == "1750003600")
        #expect(request.headers["apns-collapse-id"] == "swap-0a1b2c")
        #expect(request.headers["authorization"]?.hasPrefix("bearer ") == true)
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(
            body
                == #"{"app_data":"wallet-7","aps":{"alert":{"body":"Open your wallet to continue.","title":"Wallet activity"},"mutable-content":1},"notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"}"#
        )
        let claims = try #require(request.claims)
        #expect(claims.algorithm == "ES256")
        #expect(claims.keyID == fixture.key.keyID)
        #expect(claims.issuer == fixture.key.teamID)
        #expect(claims.issuedAt == 1_750_000_000)
    }

    @Test("pushes sent in order share one connection, each stream after the one before, also with four connections and many senders")
    func inOrder() async throws {
        let fixture = try APNsFixture()
        let pairs = 40
        let outcomes = try await fixture.run(connections: 4) { provider in
            await withTaskGroup(of: [PushOutcome].self) { group in
                for n in 0..<pairs {
                    group.addTask {
                        let silent = PushMessage(kind: .background, data: ["n": String(n)])
                        let alert = PushMessage(kind: .wake, data: ["n": String(n)], alert: .init(title: "t", body: "b"))
                        return await provider.send(
                            inOrder: [silent, alert], to: PushTarget(platform: .ios, token: deviceToken(n)), logger: testLogger)
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        #expect(outcomes.count == 2 * pairs && outcomes.allSatisfy { $0.kind == .delivered })
        let requests = await fixture.server.requests.all
        #expect(Set(requests.map(\.connection)).count > 1)
        for n in 0..<pairs {
            let pair = requests.filter { $0.deviceToken == deviceToken(n) }
            let silent = try #require(pair.first { $0.headers["apns-push-type"] == "background" })
            let alert = try #require(pair.first { $0.headers["apns-push-type"] == "alert" })
            #expect(silent.connection == alert.connection)
            #expect(try #require(silent.stream) < (try #require(alert.stream)))
        }
    }

    @Test("a throttled or refused first push neither stops nor delays the one after it")
    func throttledPrelude() async throws {
        let fixture = try APNsFixture()
        let token = deviceToken(7)
        await fixture.server.script.enqueue([.tooManyRequests(retryAfter: 30)], for: token + "/background")
        let silent = PushMessage(kind: .background, data: ["type": "incoming_htlc_wake"])
        let tooLarge = PushMessage(kind: .background, data: ["x": String(repeating: "y", count: 5000)])
        let alert = PushMessage(kind: .wake, data: ["type": "incomingHtlc"], alert: .init(title: "t", body: "b"), prelude: [silent])
        let router = try await fixture.run { provider in
            let router = PushRouter(ios: provider, android: nil)
            let throttled = await router.send(alert, to: PushTarget(platform: .ios, token: token), logger: testLogger)
            var refusedPrelude = alert
            refusedPrelude.prelude = [tooLarge]
            let refused = await router.send(refusedPrelude, to: PushTarget(platform: .ios, token: token), logger: testLogger)
            return [throttled, refused]
        }
        #expect(router.map(\.kind) == [.delivered, .delivered])
        let requests = await fixture.server.requests.all
        // The throttled silent push and its alert, then (the oversized silent push never sent) the alert.
        let answered = requests.map { "\($0.headers["apns-push-type"] ?? "") \($0.answer.status)" }
        #expect(answered.sorted() == ["alert 200", "alert 200", "background 429"])
    }

    @Test("a background push is push type background, priority 5, content-available only")
    func backgroundPush() async throws {
        let fixture = try APNsFixture()
        let message = PushMessage(kind: .background, data: ["notification_type": "wake"], sound: "default", badge: 3)

        let outcome = try await fixture.run { provider in
            await provider.send(message, to: PushTarget(platform: .ios, token: deviceToken(2)), logger: testLogger)
        }

        #expect(outcome.kind == .delivered)
        let request = try #require(await fixture.server.requests.all.first)
        #expect(request.headers["apns-push-type"] == "background")
        #expect(request.headers["apns-priority"] == "5")
        #expect(request.headers["apns-expiration"] == "0")
        #expect(request.headers["apns-collapse-id"] == nil)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"content-available":1},"notification_type":"wake"}"#)
    }

    @Test("one provider token serves every send until it is 40 minutes old, then a new one is signed")
    func providerTokenReuse() async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(3))
        let message = PushMessage.wake(swapUpdateData)

        let outcomes = try await fixture.run { provider in
            var outcomes: [PushOutcome] = []
            for _ in 0..<3 {
                outcomes.append(await provider.send(message, to: target, logger: testLogger))
            }
            fixture.clock.advance(by: .seconds(30 * 60))
            outcomes.append(await provider.send(message, to: target, logger: testLogger))
            fixture.clock.advance(by: .seconds(20 * 60))
            outcomes.append(await provider.send(message, to: target, logger: testLogger))
            outcomes.append(await provider.send(message, to: target, logger: testLogger))
            return outcomes
        }

        // Apple would answer TooManyProviderTokenUpdates to a token changed too early; the mock does too.
        #expect(outcomes.allSatisfy { $0.kind == .delivered })
        let requests = await fixture.server.requests.all
        let tokens = requests.compactMap(\.providerToken)
        #expect(Set(tokens[0..<4]).count == 1)
        #expect(Set(tokens[4...]).count == 1)
        #expect(tokens[0] != tokens[4])
        #expect(requests[4].claims?.issuedAt == 1_750_000_000 + 50 * 60)
    }

    @Test("an ExpiredProviderToken answer drops the token: retry, and the next send signs a new one")
    func expiredProviderToken() async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(4))
        await fixture.server.script.enqueue([.expiredProviderToken], for: target.token)

        let (first, second) = try await fixture.run { provider in
            (
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger),
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            )
        }

        #expect(first.kind == .retry)
        #expect(first.reason == "ExpiredProviderToken")
        #expect(first.status == 403)
        #expect(second.kind == .delivered)
        let tokens = await fixture.server.requests.all.compactMap(\.providerToken)
        #expect(tokens.count == 2 && tokens[0] != tokens[1])
    }

    @Test("a provider token signed with another key is refused by APNs: InvalidProviderToken, retry")
    func wrongSigningKey() async throws {
        let fixture = try APNsFixture()
        let impostor = TestKeys.apnsP8(keyID: fixture.key.keyID, teamID: fixture.key.teamID)

        let outcome = try await fixture.run(signingKey: impostor) { provider in
            await provider.send(.wake(swapUpdateData), to: PushTarget(platform: .ios, token: deviceToken(10)), logger: testLogger)
        }

        #expect(outcome.kind == .retry)
        #expect(outcome.status == 403)
        #expect(outcome.reason == "InvalidProviderToken")
        #expect(await fixture.server.requests.all.first?.claims == nil)
    }

    @Test("the mock's request log can be awaited while a send is in flight")
    func awaitRequests() async throws {
        let fixture = try APNsFixture(responseDelay: .milliseconds(200))
        let target = PushTarget(platform: .ios, token: deviceToken(11))

        try await fixture.run { provider in
            async let outcome = provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            let received = try await fixture.server.requests.waitFor(count: 1, timeout: .seconds(10))
            #expect(received.first?.deviceToken == target.token)
            #expect(await outcome.kind == .delivered)
        }
        await #expect(throws: RequestLogTimeout.self) {
            try await fixture.server.requests.waitFor(count: 2, timeout: .milliseconds(100))
        }
    }

    struct ScriptedCase: Sendable, CustomTestStringConvertible {
        var answer: MockAPNsAnswer
        var kind: PushOutcome.Kind
        var retryAfter: Duration?
        var testDescription: String { "\(answer.status) \(answer.reason ?? "") → \(kind.rawValue)" }
    }

    @Test(
        "APNs answers map to what the outbox must do",
        arguments: [
            ScriptedCase(answer: .unregistered, kind: .tokenDead),
            ScriptedCase(answer: .badDeviceToken, kind: .tokenDead),
            ScriptedCase(answer: .deviceTokenNotForTopic, kind: .permanent),
            ScriptedCase(answer: .payloadTooLarge, kind: .permanent),
            ScriptedCase(answer: .tooManyRequests(retryAfter: 7), kind: .retry, retryAfter: .seconds(7)),
            ScriptedCase(answer: .tooManyRequests(), kind: .retry),
            ScriptedCase(answer: .serviceUnavailable(retryAfter: 120), kind: .retry, retryAfter: .seconds(120)),
            ScriptedCase(answer: .serviceUnavailable(), kind: .retry),
            ScriptedCase(answer: .internalServerError, kind: .retry),
            ScriptedCase(answer: MockAPNsAnswer(status: 403, reason: "BadCertificateEnvironment"), kind: .permanent),
        ]
    )
    func scriptedAnswers(_ scripted: ScriptedCase) async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(5))
        await fixture.server.script.enqueue([scripted.answer], for: target.token)

        let outcome = try await fixture.run { provider in
            await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
        }

        #expect(outcome.kind == scripted.kind)
        #expect(outcome.status == scripted.answer.status)
        #expect(outcome.reason == scripted.answer.reason)
        #expect(outcome.retryAfter == scripted.retryAfter)
    }

    @Test("a token answered 503 twice is delivered on the third attempt")
    func unavailableThenDelivered() async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(6))
        await fixture.server.script.enqueue([.serviceUnavailable(), .serviceUnavailable()], for: target.token)

        let kinds = try await fixture.run { provider in
            var kinds: [PushOutcome.Kind] = []
            for _ in 0..<3 {
                kinds.append(await provider.send(.wake(swapUpdateData), to: target, logger: testLogger).kind)
            }
            return kinds
        }

        #expect(kinds == [.retry, .retry, .delivered])
    }

    @Test("a server certificate from an untrusted CA is a retry; trusting the CA file makes it work")
    func untrustedCertificate() async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(7))

        let untrusted = try await fixture.run(trustCA: false, connectTimeout: .seconds(2)) { provider in
            await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
        }
        #expect(untrusted.kind == .retry)
        #expect(untrusted.reason == "tls_error")
        #expect(await fixture.server.requests.count == 0)

        let trusted = try await fixture.run(trustCA: true) { provider in
            await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
        }
        #expect(trusted.kind == .delivered)
    }

    @Test("a payload of 4097 bytes is refused before sending; 4096 bytes is accepted")
    func payloadLimit() async throws {
        let fixture = try APNsFixture()
        let target = PushTarget(platform: .ios, token: deviceToken(8))
        let (fits, tooLarge) = try messages(renderedSizes: 4096, 4097)
        try #require(try APNsPayload.render(fits).count == 4096)
        try #require(try APNsPayload.render(tooLarge).count == 4097)

        try await fixture.run { provider in
            #expect(throws: Never.self) { try provider.validate(fits, for: target) }
            let error = #expect(throws: PushValidationError.self) { try provider.validate(tooLarge, for: target) }
            #expect(error?.code.rawValue == "payload_too_large")

            let refused = await provider.send(tooLarge, to: target, logger: testLogger)
            #expect(refused.kind == .permanent)
            #expect(refused.reason == "payload_too_large")
            #expect(await provider.send(fits, to: target, logger: testLogger).kind == .delivered)
        }
        let requests = await fixture.server.requests.all
        #expect(requests.count == 1)
        #expect(requests.first?.body.count == 4096)
    }

    @Test("a token that is not hex, or a push for Android, is refused by validate")
    func invalidTargets() async throws {
        let fixture = try APNsFixture()
        try await fixture.run { provider in
            for target in [
                PushTarget(platform: .ios, token: "not-a-hex-token"),
                PushTarget(platform: .ios, token: ""),
                PushTarget(platform: .android, token: deviceToken(9)),
            ] {
                let error = #expect(throws: PushValidationError.self) {
                    try provider.validate(.wake(swapUpdateData), for: target)
                }
                #expect(error?.code.rawValue == "invalid_message")
            }
        }
    }

    @Test("200 concurrent sends are all delivered, multiplexed over HTTP/2 with one provider token")
    func concurrentSends() async throws {
        let fixture = try APNsFixture(responseDelay: .milliseconds(50))
        let count = 200

        let outcomes = try await fixture.run { provider in
            await withTaskGroup(of: PushOutcome.self) { group in
                for n in 0..<count {
                    group.addTask {
                        await provider.send(
                            .wake(swapUpdateData),
                            to: PushTarget(platform: .ios, token: deviceToken(1000 + n)),
                            logger: testLogger
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        #expect(outcomes.count == count)
        #expect(outcomes.allSatisfy { $0.kind == .delivered })
        let requests = await fixture.server.requests.all
        #expect(requests.count == count)
        #expect(Set(requests.map(\.deviceToken)).count == count)
        #expect(Set(requests.compactMap(\.providerToken)).count == 1)
        let connections = await fixture.server.connections.connectionCount
        let streams = await fixture.server.connections.maxConcurrentRequestsPerConnection
        // HTTP/2: a handful of connections at most (one per event loop), many streams on each.
        #expect(connections <= ProcessInfo.processInfo.activeProcessorCount)
        #expect(streams > 1)
        print("APNs concurrency: \(count) sends over \(connections) connection(s), up to \(streams) concurrent streams on one")
    }
}

/// Two wake messages whose APNs bodies are exactly `a` and `b` bytes.
func messages(renderedSizes a: Int, _ b: Int) throws -> (PushMessage, PushMessage) {
    func message(padding: Int) -> PushMessage {
        PushMessage(
            kind: .wake,
            data: ["notification_type": "swap_updated", "notification_payload": String(repeating: "x", count: padding)],
            alert: PushMessage.genericWakeAlert
        )
    }
    let base = try APNsPayload.render(message(padding: 0)).count
    return (message(padding: a - base), message(padding: b - base))
}
