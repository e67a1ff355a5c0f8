import Foundation
import HeraldPush
import HeraldTestSupport
import HeraldWire
import Testing

/// Outgoing connections in real networks: a token endpoint that speaks HTTP/1.1 only, and an
/// HTTPS proxy (tinyproxy) every connection goes through.
@Suite("Egress: HTTP/1.1 token endpoints and an HTTPS proxy", .serialized)
struct EgressTests {
    @Test("FCM works with a token endpoint that speaks HTTP/1.1 only")
    func http1TokenEndpoint() async throws {
        let fixture = try FCMFixture()
        let outcome = try await fixture.run(http1TokenEndpoint: true) { provider, account in
            #expect(account.tokenURI != "")
            return await provider.send(
                .wake(swapUpdateData), to: PushTarget(platform: .android, token: FCMProviderTests.registrationToken), logger: testLogger)
        }
        #expect(outcome.kind == .delivered)
        #expect(await fixture.server.tokenRequests.count == 1)
        #expect(await fixture.server.messages.count == 1)
    }

    @Test("an APNs endpoint that does not negotiate h2 is reported as exactly that")
    func apnsWithoutHTTP2() async throws {
        let certificate = try TestCertificate.make()
        // Any TLS server that offers HTTP/1.1 only.
        let http1 = MockWebPushServer(certificate: certificate, http1Only: true)
        let key = TestKeys.apnsP8()
        let outcome = try await http1.withRunning { running in
            let caFile = try certificate.writeCAToTemporaryFile()
            defer { try? FileManager.default.removeItem(atPath: caFile) }
            return try await withPushHTTPClient(trusting: caFile) { client in
                let provider = try APNsProvider(
                    configuration: APNsConfiguration(
                        signingKeyPEM: key.privateKeyPEM, keyID: key.keyID, teamID: key.teamID, topic: "com.example.wallet",
                        environment: .custom(running.baseURL), requestTimeout: .seconds(5)),
                    httpClient: client)
                return await provider.send(
                    .wake(swapUpdateData), to: PushTarget(platform: .ios, token: String(repeating: "ab", count: 32)), logger: testLogger)
            }
        }
        #expect(outcome.kind == .retry)
        #expect(outcome.reason == "no_http2")
    }

    static func proxy(_ running: TinyProxy) -> EgressProxy {
        EgressProxy(host: "127.0.0.1", port: running.port, credentials: running.credentials.map { "\($0.user):\($0.password)" })
    }

    @Test("APNs through the proxy: one CONNECT to the APNs origin, then HTTP/2 and TLS end to end", .enabled(if: TinyProxy.isAvailable))
    func apnsThroughProxy() async throws {
        let proxy = try await TinyProxy.start()
        defer { Task { await proxy.stop() } }
        let fixture = try APNsFixture()
        let outcomes = try await fixture.run(proxy: Self.proxy(proxy)) { provider in
            var outcomes: [PushOutcome] = []
            for _ in 0..<3 {
                outcomes.append(
                    await provider.send(
                        .wake(swapUpdateData), to: PushTarget(platform: .ios, token: String(repeating: "ab", count: 32)), logger: testLogger))
            }
            return outcomes
        }
        #expect(outcomes.allSatisfy { $0.kind == .delivered })
        #expect(await fixture.server.requests.count == 3)
        // One long-lived connection through one tunnel.
        #expect(proxy.connects.count == 1)
        #expect(proxy.connects.first?.hasPrefix("127.0.0.1:") == true)
    }

    @Test("FCM through an authenticating proxy: the token endpoint and the sends both tunnel through it", .enabled(if: TinyProxy.isAvailable))
    func fcmThroughProxy() async throws {
        let proxy = try await TinyProxy.start(credentials: ("herald", "s3cret"))
        defer { Task { await proxy.stop() } }
        let fixture = try FCMFixture()
        let outcome = try await fixture.run(proxy: Self.proxy(proxy)) { provider, _ in
            await provider.send(
                .wake(swapUpdateData), to: PushTarget(platform: .android, token: FCMProviderTests.registrationToken), logger: testLogger)
        }
        #expect(outcome.kind == .delivered)
        // The token request (AsyncHTTPClient) and the send (the HTTP/2 transport): two tunnels.
        #expect(proxy.connects.count == 2)
        #expect(!proxy.log.contains("s3cret"))
    }

    @Test("wrong proxy credentials: the push is retried, never sent around the proxy", .enabled(if: TinyProxy.isAvailable))
    func refusedByProxy() async throws {
        let proxy = try await TinyProxy.start(credentials: ("herald", "s3cret"))
        defer { Task { await proxy.stop() } }
        let fixture = try APNsFixture()
        let outcome = try await fixture.run(proxy: EgressProxy(host: "127.0.0.1", port: proxy.port, credentials: "herald:wrong")) { provider in
            await provider.send(.wake(swapUpdateData), to: PushTarget(platform: .ios, token: String(repeating: "ab", count: 32)), logger: testLogger)
        }
        #expect(outcome.kind == .retry)
        #expect(outcome.reason == "proxy_refused")
        #expect(await fixture.server.requests.count == 0)
    }

    @Test(
        "Web Push through the proxy; with the proxy down the send is retried, and it goes once the proxy is back", .enabled(if: TinyProxy.isAvailable)
    )
    func webPushThroughProxy() async throws {
        let proxy = try await TinyProxy.start()
        defer { Task { await proxy.stop() } }
        let fixture = try WebPushFixture(http1Only: true)
        try await fixture.run(proxy: Self.proxy(proxy)) { provider, subscription in
            let target = WebPushProviderTests.target(subscription)
            #expect(await provider.send(.wake(swapUpdateData), to: target, logger: testLogger).kind == .delivered)
            #expect(proxy.connects.count == 1)

            await proxy.pause()
            let down = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            #expect(down.kind == .retry)
            try await proxy.resume()
            let back = await provider.send(.wake(swapUpdateData), to: target, logger: testLogger)
            #expect(back.kind == .delivered)
        }
        #expect(await fixture.server.messages.count == 2)
    }

    @Test("NO_PROXY hosts go direct; the proxy settings read HERALD_HTTPS_PROXY before HTTPS_PROXY and https_proxy")
    func proxySettings() throws {
        let proxy = try #require(
            try EgressProxy.from(environment: [
                "HTTPS_PROXY": "http://other:1", "HERALD_HTTPS_PROXY": "http://u%40x:p%3Aw@proxy.internal:3128",
                "NO_PROXY": "localhost, .corp.example,api.push.example",
            ]))
        #expect(proxy.host == "proxy.internal")
        #expect(proxy.port == 3128)
        #expect(proxy.credentials == "u@x:p:w")
        #expect(proxy.description == "http://…@proxy.internal:3128")
        #expect(!proxy.applies(to: "localhost"))
        #expect(!proxy.applies(to: "a.corp.example"))
        #expect(!proxy.applies(to: "API.push.example"))
        #expect(proxy.applies(to: "api.push.apple.com"))
        #expect(try EgressProxy.from(environment: ["https_proxy": "proxy:8080"])?.port == 8080)
        #expect(try EgressProxy.from(environment: [:]) == nil)
        #expect(throws: EgressProxy.Invalid.self) { try EgressProxy.from(environment: ["HTTPS_PROXY": "https://proxy:443"]) }
        #expect(try EgressProxy.from(environment: ["HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"])?.applies(to: "x") == false)
    }
}
