import Foundation
import HTTPTypes
import HeraldDevice
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import Testing

/// `webpush` devices end to end: registration, webhooks, wakes, sessions and dead subscriptions,
/// against the Web Push look-alike (and the FCM one, to compare what each carries).
@Suite("Delivery to Web Push")
struct WebPushDeliveryTests {
    static let swap = #"{"event":"swap.update","data":{"id":"swap-9","status":"transaction.claim.pending"}}"#
    static let contact = "mailto:ops@wallet.example"

    /// An NDS with real providers (no local one), taking loopback endpoints at registration
    /// unless told otherwise.
    static func nds(registrationAllowsPrivate: Bool = true) throws -> TestNDS {
        var nds = try TestNDS()
        nds.settings.localProvider = false
        nds.settings.registrationsPerMinute = 1_000
        nds.settings.webPush = WebPushPolicy(allowPrivateEndpoints: registrationAllowsPrivate)
        return nds
    }

    /// The APNs, FCM and Web Push look-alikes, and providers for all three pointing at them.
    static func withMocks(
        senderAllowsPrivate: Bool = true, apns: Bool = false, navigateURL: String? = nil,
        _ body: (MockPushServers, MockWebPushServer, PushRouter) async throws -> Void
    ) async throws {
        let servers = try MockPushServers()
        let webPush = MockWebPushServer(certificate: servers.certificate)
        try await servers.withRunning { running in
            try await webPush.withRunning { _ in
                let httpClient = try PushHTTPClient(
                    configuration: .init(extraTrustRootsPEMFile: running.caFile, allowPrivateWebPushEndpoints: senderAllowsPrivate))
                do {
                    let fcm = try FCMProvider(
                        configuration: FCMConfiguration(
                            serviceAccount: try ServiceAccount(json: running.serviceAccount.json), baseURL: running.fcmBaseURL),
                        httpClient: httpClient)
                    let provider = try WebPushProvider(
                        configuration: WebPushConfiguration(vapidKeyPEM: VAPIDSigner.makeKeyPEM(), contact: contact),
                        policy: WebPushPolicy(allowPrivateEndpoints: senderAllowsPrivate), navigateURL: navigateURL, httpClient: httpClient)
                    let ios =
                        try apns
                        ? APNsProvider(
                            configuration: APNsConfiguration(
                                signingKeyPEM: servers.apnsKey.privateKeyPEM, keyID: servers.apnsKey.keyID, teamID: servers.apnsKey.teamID,
                                topic: servers.topic, environment: .custom(running.apnsBaseURL)),
                            httpClient: httpClient) : nil
                    try await body(servers, webPush, PushRouter(ios: ios, android: fcm, webpush: provider))
                } catch {
                    await httpClient.shutdown()
                    throw error
                }
                await httpClient.shutdown()
            }
        }
    }

    static func registration(_ subscription: WebPushSubscription) throws -> String {
        String(
            decoding: try WireJSON.encode(DeviceRegistrationRequest(platform: "webpush", pushToken: nil, subscription: subscription)), as: UTF8.self)
    }

    static func register(_ client: some TestClientProtocol, _ subscription: WebPushSubscription) async throws -> DeviceRegistrationAnswer {
        let response = try await client.post("/api/v1/devices", json: try registration(subscription))
        #expect(response.status == .created, "\(response.text)")
        return try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(buffer: response.body))
    }

    @Test("a webhook to a webpush alias reaches the push service as a message that decrypts to the FCM data map of the same event")
    func webhookDecryptsToFCMDataMap() async throws {
        let nds = try Self.nds()
        try await Self.withMocks { mocks, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let subscription = try await webPush.makeSubscription()
                let device = try await Self.register(client, subscription.subscription)
                #expect(device.webhookURL.contains("platform=webpush&token=\(device.alias)"))

                let pushed = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)&app_data=a1", json: Self.swap)
                #expect(pushed.status == .ok, "\(pushed.text)")
                let android = try await client.post("/api/v1/notify?platform=android&token=fcm:APA91b-1&app_data=a1", json: Self.swap)
                #expect(android.status == .ok)

                let message = try #require(try await webPush.messages.waitFor(count: 1).first)
                #expect(message.answer == .created)
                #expect(message.urgency == "high")
                #expect(message.topic == "swap_swap-9" || message.topic?.count == 32)
                let plaintext = try #require(message.plaintext)
                let fcm = try #require(try await mocks.fcm.messages.waitFor(count: 1).first)
                let fcmData = try #require(fcm.message?["data"] as? [String: String])
                let decrypted = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: String])
                #expect(decrypted == fcmData)
                #expect(decrypted["notification_type"] == "swap_updated")

                // The device plugin opens the body Herald sent as it opens the FCM data map.
                let incoming = IncomingPush(webPush: message.body, privateKey: subscription.privateKey, authSecret: subscription.authSecret)
                #expect(incoming == IncomingPush(userInfo: fcmData.mapValues { JSONValue.string($0) }))

                let id = try #require(pushed.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .delivered })
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.text.contains(#"provider="webpush""#), "\(metrics.text.prefix(2000))")
            }
        }
    }

    @Test("a wake to a webpush device is one Urgency: high message")
    func wake() async throws {
        let nds = try Self.nds()
        let key = try await nds.apiKey([.wake])
        try await Self.withMocks { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let device = try await Self.register(client, try await webPush.makeSubscription().subscription)
                let response = try await client.call(.post, "/api/v1/wake", key: key, json: WakeTests.wake(device.deviceID))
                #expect(response.status == .accepted, "\(response.text)")
                #expect((response.json["job_ids"] as? [String])?.count == 1)
                let message = try #require(try await webPush.messages.waitFor(count: 1).first)
                #expect(message.urgency == "high")
                let plaintext = try #require(message.plaintext)
                let data = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: String])
                #expect(data["type"] == "incomingHtlc")
                #expect(data["payment_hash"] == WakeTests.hash)
                // Its one job is delivered, and a delivered job is never sent again.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 1, dead: 0) })
                #expect(await webPush.messages.count == 1)
            }
        }
    }

    @Test("a subscription the service calls gone (410) or unknown (404) is never pushed again, and later webhooks get 410", arguments: [410, 404])
    func deadSubscription(status: Int) async throws {
        let nds = try Self.nds()
        try await Self.withMocks { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let subscription = try await webPush.makeSubscription()
                await webPush.script.always(status == 410 ? .gone : .notFound, for: subscription.id)
                let device = try await Self.register(client, subscription.subscription)
                let first = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: Self.swap)
                #expect(first.status == .ok)
                let id = try #require(first.json["id"] as? String)
                #expect(try await eventually { try await nds.store.status(jobID: id)?.state == .dead })
                let second = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: Self.swap)
                #expect(second.status == .gone)
                #expect(second.json["error"] as? String == "token_unregistered")
                // The one job is dead and the second made none: nothing can reach the service later.
                #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 1))
                #expect(await webPush.messages.count == 1)
            }
        }
    }

    @Test("an endpoint on a private address is refused at registration (400 private_endpoint) and, registered anyway, at connect time")
    func privateEndpoint() async throws {
        try await Self.withMocks(senderAllowsPrivate: false) { _, webPush, providers in
            let strict = try Self.nds(registrationAllowsPrivate: false)
            try await strict.app(providers: providers).test(.live) { client in
                let subscription = try await webPush.makeSubscription()
                let response = try await client.post("/api/v1/devices", json: try Self.registration(subscription.subscription))
                #expect(response.status == .badRequest)
                #expect(response.json["error"] as? String == "private_endpoint")
                #expect((response.json["message"] as? String)?.contains("127.0.0.1") == true)
                // A name that does not resolve is said as such, not as a private address.
                var nowhere = subscription.subscription
                nowhere.endpoint = "https://no-such-push-service.invalid/wp/1"
                let unresolved = try await client.post("/api/v1/devices", json: try Self.registration(nowhere))
                #expect(unresolved.status == .badRequest)
                #expect(unresolved.json["error"] as? String == "unresolvable_endpoint", "\(unresolved.text)")
            }
            // Registration that took it (as if its name resolved elsewhere then): the sender
            // still refuses the address it connects to, and nothing reaches the endpoint.
            let lax = try Self.nds(registrationAllowsPrivate: true)
            try await lax.app(providers: providers).test(.live) { client in
                let device = try await Self.register(client, try await webPush.makeSubscription().subscription)
                let pushed = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: Self.swap)
                #expect(pushed.status == .ok)
                let id = try #require(pushed.json["id"] as? String)
                #expect(try await eventually { try await lax.store.status(jobID: id)?.state == .dead })
                #expect(try await lax.store.status(jobID: id)?.lastError?.contains("private_endpoint") == true)
                #expect(await webPush.messages.count == 0)
            }
        }
    }

    @Test("registration refuses a bad subscription with 400 and the field; raw-token webhooks cannot name a webpush target")
    func validation() async throws {
        let nds = try Self.nds()
        try await Self.withMocks { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let good = try await webPush.makeSubscription().subscription
                var http = good
                http.endpoint = http.endpoint.replacingOccurrences(of: "https:", with: "http:")
                var long = good
                long.endpoint += "/" + String(repeating: "a", count: 1_000)
                var offCurve = good
                offCurve.keys.p256dh = Data([4] + [UInt8](repeating: 1, count: 64)).base64URLEncodedString
                var shortAuth = good
                shortAuth.keys.auth = Data(count: 15).base64URLEncodedString
                // A body that does not decode is 422 invalid_body, as on every route.
                let cases: [(String, HTTPResponse.Status, String, String)] = [
                    (try Self.registration(http), .badRequest, "invalid_subscription", "endpoint"),
                    (try Self.registration(long), .badRequest, "invalid_subscription", "endpoint"),
                    (try Self.registration(offCurve), .badRequest, "invalid_subscription", "p256dh"),
                    (try Self.registration(shortAuth), .badRequest, "invalid_subscription", "auth"),
                    (#"{"platform":"webpush"}"#, .badRequest, "invalid_subscription", "subscription"),
                    (#"{"platform":"webpush","subscription":{"endpoint":"https://x.example/1"}}"#, .unprocessableContent, "invalid_body", "keys"),
                    (
                        #"{"platform":"ios","subscription":\#(String(decoding: try WireJSON.encode(good), as: UTF8.self))}"#, .badRequest,
                        "invalid_subscription", "push_token"
                    ),
                ]
                for (body, status, code, mentions) in cases {
                    let response = try await client.post("/api/v1/devices", json: body)
                    #expect(response.status == status, "\(body)")
                    #expect(response.json["error"] as? String == code, "\(response.text)")
                    #expect((response.json["message"] as? String)?.contains(mentions) == true, "\(response.text)")
                }
                let raw = try await client.post(
                    "/api/v1/notify?platform=webpush&token=\(good.storageToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                    json: Self.swap)
                #expect(raw.status == .badRequest)
                #expect(raw.json["error"] as? String == "alias_required")
                #expect(try await nds.store.counts() == QueueCounts(pending: 0, delivered: 0, dead: 0))
                #expect(await webPush.messages.count == 0)
            }
        }
    }

    @Test("many apps register and rotate subscriptions at once; PUT moves the device to the new endpoint")
    func concurrentRegistrationAndRotation() async throws {
        let nds = try Self.nds()
        try await Self.withMocks { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                var subscriptions: [MockWebPushSubscription] = []
                for _ in 0..<24 { subscriptions.append(try await webPush.makeSubscription()) }
                // Each over a connection of its own, so the registrations really overlap.
                let port = try #require(client.port)
                let devices = try await withPhoneHTTP { http in
                    try await withThrowingTaskGroup(of: DeviceRegistrationAnswer.self) { group in
                        for subscription in subscriptions {
                            group.addTask {
                                let answer = try await TestPhone.answer(
                                    "http://nds.test/api/v1/devices", json: try Self.registration(subscription.subscription), port: port,
                                    using: http)
                                #expect(answer.status == 201, "\(answer.body)")
                                return try WireJSON.decode(DeviceRegistrationAnswer.self, from: Data(answer.body.utf8))
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                #expect(Set(devices.map(\.alias)).count == 24)

                // The distributor rotated the first device's endpoint.
                let device = try #require(devices.first)
                let rotated = try await webPush.makeSubscription()
                let update = String(
                    decoding: try WireJSON.encode(DeviceTokenUpdate(pushToken: nil, subscription: rotated.subscription)), as: UTF8.self)
                let secret = try #require(device.deviceSecret)
                let put = try await client.execute(
                    uri: "/api/v1/devices/\(device.deviceID)", method: .put,
                    headers: [.authorization: "Bearer \(secret)", .contentType: "application/json"],
                    body: ByteBuffer(string: update))
                #expect(put.status == .ok, "\(put.text)")
                let pushed = try await client.post("/api/v1/notify?platform=webpush&token=\(device.alias)", json: Self.swap)
                #expect(pushed.status == .ok)
                let message = try #require(try await webPush.messages.waitFor(count: 1).first)
                #expect(message.subscriptionID == rotated.id)
                #expect(message.plaintext != nil)
            }
        }
    }

    @Test("the VAPID public key is served for apps to subscribe with; 404 where Web Push is not configured")
    func vapidPublicKey() async throws {
        let nds = try Self.nds()
        try await Self.withMocks { _, _, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.execute(uri: "/api/v1/webpush/vapid-public-key", method: .get)
                #expect(response.status == .ok)
                let answer = try WireJSON.decode(VAPIDPublicKeyAnswer.self, from: Data(buffer: response.body))
                let provider = try #require(providers.provider(for: .webpush) as? WebPushProvider)
                #expect(answer.publicKey == provider.signer.publicKey)
                #expect(Data(base64URL: answer.publicKey)?.count == 65)
            }
        }
        let local = try TestNDS()
        try await local.app(providers: PushRouter(ios: nil, android: nil)).test(.router) { client in
            let response = try await client.execute(uri: "/api/v1/webpush/vapid-public-key", method: .get)
            #expect(response.status == .notFound)
            #expect(response.json["error"] as? String == "not_configured")
        }
    }

    @Test("a backend session with a subscription gets the event's text and data in one message")
    func backendSession() async throws {
        let nds = try Self.nds()
        let key = try await nds.apiKey()
        try await Self.withMocks { _, webPush, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let subscription = try await webPush.makeSubscription()
                let login =
                    #"{"allow_notifications":true,"platform":"webpush","subscription":\#(String(decoding: try WireJSON.encode(subscription.subscription), as: UTF8.self))}"#
                let put = try await client.call(.put, "/api/v1/users/u1/sessions/s1", key: key, json: login)
                #expect(put.status == .created, "\(put.text)")
                #expect((put.json["subscription"] as? [String: Any])?["endpoint"] as? String == subscription.subscription.endpoint)
                #expect(put.json["push_token"] == nil)
                let event = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived)
                #expect(event.status == .ok, "\(event.text)")
                #expect(event.json["targeted"] as? Int == 1)
                let message = try #require(try await webPush.messages.waitFor(count: 1).first)
                #expect(message.urgency == "normal")
                let plaintext = try #require(message.plaintext)
                let object = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
                #expect(object["action"] as? String == "DEPOSIT_RECEIVED")
                #expect((object["notification"] as? [String: Any])?["title"] as? String == "Deposit received")
            }
        }
    }
}
