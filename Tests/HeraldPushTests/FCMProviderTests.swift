import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Testing

@Suite("FCM provider, on the wire")
struct FCMProviderTests {
    static let registrationToken = "fcm-token:APA91bH_0123456789abcdefghijklmnopqrstuvwxyz"

    @Test("the service account's RS256 assertion is exchanged for an access token that authorises the send")
    func oauthFlow() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)

        let (outcome, account) = try await fixture.run { provider, account in
            (await provider.send(.wake(swapUpdateData), to: target, logger: testLogger), account)
        }

        #expect(outcome.kind == .delivered)
        #expect(outcome.providerMessageID?.hasPrefix("projects/herald-test/messages/") == true)
        let tokenRequest = try #require(await fixture.server.tokenRequests.all.first)
        #expect(tokenRequest.grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let assertion = try #require(tokenRequest.assertion)
        #expect(assertion.algorithm == "RS256")
        #expect(assertion.keyID == account.privateKeyID)
        #expect(assertion.issuer == account.clientEmail)
        #expect(assertion.scope == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(assertion.audience == account.tokenURI)
        #expect(assertion.issuedAt == 1_750_000_000)
        #expect(assertion.expiresAt == 1_750_003_600)
        let issued = try #require(tokenRequest.issuedToken)

        let send = try #require(await fixture.server.messages.all.first)
        #expect(send.accepted)
        #expect(send.projectID == "herald-test")
        #expect(send.headers["authorization"] == "Bearer \(issued)")
    }

    @Test("a wake push is data-only, HIGH priority, every data value a string")
    func wakeMessage() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)
        let message = PushMessage.wake(swapUpdateData, collapseID: "swap-0a1b2c", expiresAt: Date(timeIntervalSince1970: 1_750_000_600))

        let outcome = try await fixture.run { provider, _ in
            await provider.send(message, to: target, logger: testLogger)
        }

        #expect(outcome.kind == .delivered)
        let send = try #require(await fixture.server.messages.all.first)
        #expect(
            String(decoding: send.body, as: UTF8.self)
                == #"{"message":{"android":{"collapse_key":"swap-0a1b2c","priority":"HIGH","ttl":"600s"},"data":{"app_data":"wallet-7","notification_payload":"{\"id\":\"0a1b2c\",\"status\":\"transaction.mempool\"}","notification_type":"swap_updated"},"token":"fcm-token:APA91bH_0123456789abcdefghijklmnopqrstuvwxyz"}}"#
        )
        let data = try #require(send.message?["data"] as? [String: Any])
        #expect(data.values.allSatisfy { $0 is String })
        #expect(send.message?["notification"] == nil)
    }

    @Test("a wallet backend's alert carries notification, android.notification and the apns block (seed 002)")
    func alertMessage() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)
        let message = PushMessage(
            kind: .alert,
            data: ["action": "DEPOSIT_RECEIVED", "campaign_id": "", "campaign_name": "", "amount": "100.00"],
            alert: .init(title: "Deposit received", body: "100.00 USDC is on its way", image: "https://example.com/i.png"),
            sound: "default",
            badge: 1,
            android: .init(channelID: "default", sound: "default", color: "#4CAF50", icon: "ic_notification")
        )

        _ = try await fixture.run { provider, _ in
            await provider.send(message, to: target, logger: testLogger)
        }

        let send = try #require(await fixture.server.messages.all.first)
        #expect(send.accepted)
        #expect(
            String(decoding: send.body, as: UTF8.self)
                == ##"{"message":{"android":{"notification":{"channel_id":"default","color":"#4CAF50","icon":"ic_notification","sound":"default"},"priority":"HIGH"},"apns":{"payload":{"aps":{"badge":1,"mutable-content":1,"sound":"default"}}},"data":{"action":"DEPOSIT_RECEIVED","amount":"100.00","campaign_id":"","campaign_name":""},"notification":{"body":"100.00 USDC is on its way","image":"https://example.com/i.png","title":"Deposit received"},"token":"fcm-token:APA91bH_0123456789abcdefghijklmnopqrstuvwxyz"}}"##
        )
    }

    @Test("a background push is NORMAL priority")
    func backgroundPriority() async throws {
        let fixture = try FCMFixture()
        _ = try await fixture.run { provider, _ in
            await provider.send(
                PushMessage(kind: .background, data: ["k": "v"]),
                to: PushTarget(platform: .android, token: Self.registrationToken),
                logger: testLogger
            )
        }
        let android = try #require(await fixture.server.messages.all.first?.message?["android"] as? [String: Any])
        #expect(android["priority"] as? String == "NORMAL")
    }

    @Test("one access token serves many sends, concurrent ones included")
    func accessTokenShared() async throws {
        let fixture = try FCMFixture()

        let outcomes = try await fixture.run { provider, _ in
            await withTaskGroup(of: PushOutcome.self) { group in
                for n in 0..<50 {
                    group.addTask {
                        await provider.send(
                            .wake(swapUpdateData),
                            to: PushTarget(platform: .android, token: "token-\(n)"),
                            logger: testLogger
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        #expect(outcomes.count == 50)
        #expect(outcomes.allSatisfy { $0.kind == .delivered })
        #expect(await fixture.server.issuedTokenCount == 1)
        #expect(Set(await fixture.server.messages.all.compactMap(\.accessToken)).count == 1)
    }

    @Test("the access token is fetched again a minute before it expires")
    func accessTokenExpiry() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)

        let counts = try await fixture.run { provider, _ in
            var counts: [Int] = []
            _ = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            fixture.clock.advance(by: .seconds(58 * 60))
            _ = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            counts.append(await fixture.server.issuedTokenCount)
            fixture.clock.advance(by: .seconds(60 + 1))
            _ = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            counts.append(await fixture.server.issuedTokenCount)
            return counts
        }

        #expect(counts == [1, 2])
        #expect(await fixture.server.messages.all.allSatisfy(\.accepted))
    }

    @Test("a 401 drops the access token: retry, and the next send fetches a new one")
    func unauthorised() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)

        let (first, second) = try await fixture.run { provider, _ in
            _ = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            await fixture.server.revokeAccessTokens()
            return (
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger),
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            )
        }

        #expect(first.kind == .retry)
        #expect(first.status == 401)
        #expect(second.kind == .delivered)
        #expect(await fixture.server.issuedTokenCount == 2)
    }

    struct ScriptedCase: Sendable, CustomTestStringConvertible {
        var answer: MockFCMAnswer
        var kind: PushOutcome.Kind
        var reason: String
        var retryAfter: Duration?
        var testDescription: String { "\(answer.status) \(reason) → \(kind.rawValue)" }
    }

    @Test(
        "FCM answers map to what the outbox must do",
        arguments: [
            ScriptedCase(answer: .unregistered, kind: .tokenDead, reason: "UNREGISTERED"),
            ScriptedCase(answer: .invalidRegistrationToken, kind: .tokenDead, reason: "INVALID_ARGUMENT"),
            ScriptedCase(answer: .invalidArgument, kind: .permanent, reason: "INVALID_ARGUMENT"),
            ScriptedCase(answer: .senderIDMismatch, kind: .permanent, reason: "SENDER_ID_MISMATCH"),
            ScriptedCase(
                answer: .quotaExceeded(retryAfter: 30),
                kind: .retry,
                reason: "QUOTA_EXCEEDED",
                retryAfter: .seconds(30)
            ),
            ScriptedCase(answer: .unavailable(retryAfter: 5), kind: .retry, reason: "UNAVAILABLE", retryAfter: .seconds(5)),
            ScriptedCase(answer: .internalError, kind: .retry, reason: "INTERNAL"),
            ScriptedCase(answer: .unauthenticated, kind: .retry, reason: "UNAUTHENTICATED"),
        ]
    )
    func scriptedAnswers(_ scripted: ScriptedCase) async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)
        await fixture.server.script.enqueue([scripted.answer], for: target.token)

        let outcome = try await fixture.run { provider, _ in
            await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
        }

        #expect(outcome.kind == scripted.kind)
        #expect(outcome.status == scripted.answer.status)
        #expect(outcome.reason == scripted.reason)
        #expect(outcome.retryAfter == scripted.retryAfter)
    }

    @Test("a token endpoint refusing the key is permanent; its server error is a retry")
    func tokenEndpointFailures() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)

        let (refused, failed, recovered) = try await fixture.run { provider, account in
            await fixture.server.tokenScript.enqueue([.invalidGrant, .serverError], for: account.clientEmail)
            return (
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger),
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger),
                await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            )
        }

        #expect(refused.kind == .permanent)
        #expect(refused.reason == "oauth_invalid_grant")
        #expect(failed.kind == .retry)
        #expect(failed.status == 500)
        #expect(recovered.kind == .delivered)
        #expect(await fixture.server.messages.count == 1)
    }

    @Test("an assertion signed with a key Google does not know is refused: permanent, nothing sent")
    func untrustedServiceAccount() async throws {
        let fixture = try FCMFixture()

        let outcome = try await fixture.run(trusted: false) { provider, _ in
            await provider.send(.wake(swapUpdateData), to: PushTarget(platform: .android, token: Self.registrationToken), logger: testLogger)
        }

        #expect(outcome.kind == .permanent)
        #expect(outcome.reason == "oauth_invalid_grant")
        #expect(await fixture.server.tokenRequests.all.first?.assertion == nil)
        #expect(await fixture.server.messages.count == 0)
    }

    @Test("validate refuses reserved data keys and messages over 4096 bytes")
    func validation() async throws {
        let fixture = try FCMFixture()
        let target = PushTarget(platform: .android, token: Self.registrationToken)
        try await fixture.run { provider, _ in
            let reserved = #expect(throws: PushValidationError.self) {
                try provider.validate(PushMessage(kind: .wake, data: ["google.c.a": "1"]), for: target)
            }
            #expect(reserved?.code.rawValue == "invalid_message")
            let large = PushMessage(kind: .wake, data: ["notification_payload": String(repeating: "x", count: 4096)])
            let tooLarge = #expect(throws: PushValidationError.self) { try provider.validate(large, for: target) }
            #expect(tooLarge?.code.rawValue == "payload_too_large")
            #expect(await provider.send(large, to: target, logger: testLogger).kind == .permanent)
        }
        #expect(await fixture.server.messages.count == 0)
    }
}
