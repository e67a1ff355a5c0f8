import Foundation
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// Webhooks through the outbox to APNs and Web Push with every connection through a real HTTPS
/// proxy (tinyproxy): while the proxy is down the jobs wait, and they go once it is back.
@Suite("Delivery through an HTTPS proxy", .serialized, .enabled(if: TinyProxy.isAvailable))
struct ProxyDeliveryTests {
    static let swap = WebPushDeliveryTests.swap

    @Test("APNs and Web Push through the proxy; with it stopped, jobs wait and are delivered once it is back")
    func waitsForTheProxy() async throws {
        let proxy = try await TinyProxy.start()
        defer { Task { await proxy.stop() } }
        let nds = try WebPushDeliveryTests.nds()
        let servers = try MockPushServers()
        let webPush = MockWebPushServer(certificate: servers.certificate)
        try await servers.withRunning { running in
            try await webPush.withRunning { _ in
                let httpClient = try PushHTTPClient(
                    configuration: .init(
                        extraTrustRootsPEMFile: running.caFile, connectTimeout: .seconds(2),
                        proxy: EgressProxy(host: "127.0.0.1", port: proxy.port), allowPrivateWebPushEndpoints: true))
                do {
                    let apns = try APNsProvider(
                        configuration: APNsConfiguration(
                            signingKeyPEM: servers.apnsKey.privateKeyPEM, keyID: servers.apnsKey.keyID, teamID: servers.apnsKey.teamID,
                            topic: servers.topic, environment: .custom(running.apnsBaseURL)),
                        httpClient: httpClient)
                    let provider = try WebPushProvider(
                        configuration: WebPushConfiguration(vapidKeyPEM: VAPIDSigner.makeKeyPEM(), contact: WebPushDeliveryTests.contact),
                        policy: WebPushPolicy(allowPrivateEndpoints: true), httpClient: httpClient)
                    try await nds.app(providers: PushRouter(ios: apns, android: nil, webpush: provider)).test(.live) { client in
                        let device = try await WebPushDeliveryTests.register(client, try await webPush.makeSubscription().subscription)
                        let token = String(repeating: "5e", count: 32)

                        // Through the proxy.
                        #expect(try await client.post("/api/v1/notify?platform=ios&token=\(token)", json: Self.swap).status == .ok)
                        #expect(try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: Self.swap).status == .ok)
                        _ = try await servers.apns.requests.waitFor(count: 1)
                        _ = try await webPush.messages.waitFor(count: 1)
                        #expect(proxy.connects.count == 2)

                        // Down: the webhooks are taken, their pushes wait.
                        await proxy.pause()
                        let ios = try await client.post(
                            "/api/v1/notify?platform=ios&token=\(token)", json: #"{"event":"swap.update","data":{"id":"swap-10","status":"x"}}"#)
                        let web = try await client.post(
                            "/api/v1/notify?platform=webpush&token=\(device.alias)",
                            json: #"{"event":"swap.update","data":{"id":"swap-10","status":"x"}}"#)
                        #expect(ios.status == .ok && web.status == .ok)
                        let ids = [try #require(ios.json["id"] as? String), try #require(web.json["id"] as? String)]
                        // Each was tried and failed (the cause), none delivered (the consequence).
                        for id in ids {
                            #expect(
                                try await eventually(timeout: .seconds(20)) {
                                    let status = try await nds.store.status(jobID: id)
                                    return (status?.attempts ?? 0) >= 1 && status?.lastError != nil
                                })
                            #expect(try await nds.store.status(jobID: id)?.state != .delivered)
                        }
                        #expect(await servers.apns.requests.count == 1)
                        #expect(await webPush.messages.count == 1)

                        // Back: both go, through the proxy again.
                        try await proxy.resume()
                        for id in ids {
                            #expect(try await eventually(timeout: .seconds(20)) { try await nds.store.status(jobID: id)?.state == .delivered })
                        }
                        #expect(await servers.apns.requests.count == 2)
                        #expect(await webPush.messages.count == 2)
                        #expect(proxy.connects.count >= 4)
                    }
                } catch {
                    await httpClient.shutdown()
                    throw error
                }
                await httpClient.shutdown()
            }
        }
    }
}
