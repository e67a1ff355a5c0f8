import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice
import HeraldPush
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `POST /wake`, presence and forwarding hints, against the APNs and FCM look-alikes.
@Suite("Wake, presence and forwarding hints")
struct WakeTests {
    static let hash = String(repeating: "ab", count: 32)

    static func wake(_ device: String, kind: String = "incomingHtlc", hash: String? = WakeTests.hash, extra: String = "") -> String {
        let hashField = hash.map { #","payment_hash":"\#($0)""# } ?? ""
        return #"{"device":"\#(device)","kind":"\#(kind)"\#(hashField)\#(extra)}"#
    }

    func register(_ nds: TestNDS, platform: Platform = .ios, token: String) async throws -> DeviceRegistration {
        try await nds.store.registerDevice(platform: platform, token: token, now: Date())
    }

    @Test("the figures count what they name: the in-memory peak counts jobs, not reserved room; a wake's two pushes are two pushes sent")
    func figures() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "f1", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                #expect(response.status == .accepted)
                _ = try await servers.apns.requests.waitFor(count: 2)
                #expect(
                    try await eventually {
                        try await client.execute(uri: "/metrics", method: .get).text
                            .contains(#"herald_pushes_sent_total{provider="apns",outcome="delivered",app="default"} 2"#)
                    })
                // One job was ever in memory: the claim at start reserved room for many, and
                // found none (the peak once read 1024 on an idle server).
                let figures = try await client.execute(uri: "/metrics", method: .get).text
                #expect(
                    figures.contains("herald_outbox_in_memory_peak 1.0\n"), "\(figures.split(separator: "\n").filter { $0.contains("in_memory") })")
            }
        }
    }

    @Test("iOS gets a silent push and a time-sensitive alert, exactly as seed 004 shapes them, and the plugin handles both")
    func twoPushes() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let token = String(repeating: "a1", count: 32)
        let device = try await register(nds, token: token)
        let expiry = Int(Date().timeIntervalSince1970) + 120
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.call(
                    .post, "/api/v1/wake", key: key,
                    json: Self.wake(device.device.id, extra: #","amount_msat":250000,"expires_at":\#(expiry)"#)
                )
                #expect(response.status == .accepted)
                #expect(response.json["pushed"] as? Bool == true)
                // One job: the silent push travels ahead of the alert inside it.
                let ids = try #require(response.json["job_ids"] as? [String])
                #expect(ids.count == 1)

                let requests = try await servers.apns.requests.waitFor(count: 2)
                let silent = try #require(requests.first { $0.headers["apns-push-type"] == "background" })
                let alert = try #require(requests.first { $0.headers["apns-push-type"] == "alert" })
                for request in [silent, alert] { #expect(request.deviceToken == token) }
                try Self.expectAppleRules(silent: silent, alert: alert, expiry: expiry)

                let silentJSON = try #require(silent.json)
                #expect(NSDictionary(dictionary: silentJSON["aps"] as? [String: Any] ?? [:]) == ["content-available": 1])
                #expect(silentJSON["type"] as? String == "incoming_htlc_wake")
                #expect(silentJSON["payment_hash"] as? String == Self.hash)
                #expect(silentJSON["amount_msat"] as? String == "250000")
                #expect(silentJSON["expires_at"] as? String == String(expiry))
                // The wake's id on both pushes: what the plugin acknowledges.
                #expect(silentJSON["wake_id"] as? String == response.json["wake_id"] as? String)
                #expect(Set(silentJSON.keys) == ["aps", "type", "payment_hash", "amount_msat", "expires_at", "wake_id"])

                let alertJSON = try #require(alert.json)
                let aps = try #require(alertJSON["aps"] as? [String: Any])
                #expect(aps["interruption-level"] as? String == "time-sensitive")
                #expect(aps["mutable-content"] as? Int == 1)
                #expect(aps["sound"] as? String == "default")
                let alertText = try #require(aps["alert"] as? [String: Any])
                #expect(alertText["title"] as? String == "Payment Incoming")
                #expect(alertJSON["type"] as? String == "incomingHtlc")
                #expect(alertJSON["payment_hash"] as? String == Self.hash)
                #expect(alertJSON["amount_msat"] as? String == "250000")

                // Both pushes, byte for byte as APNs got them, through the device plugin.
                let folder = nds.folder.appendingPathComponent("phone")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let plugin = DevicePlugin(
                    wallet: DevelopmentWallet(folder: folder, issuer: try Bolt11InvoiceIssuer(folder: folder)), transport: URLSessionReplyTransport())
                let fromSilent = IncomingPush(json: silent.body)
                guard case .wake(let silentEvent) = fromSilent.notification else {
                    Issue.record("the silent push did not decode as a wake: \(fromSilent.notification)")
                    return
                }
                #expect(silentEvent.silent && silentEvent.kind == .incomingHtlc && silentEvent.amountMsat == 250_000)
                #expect(silentEvent.paymentHash == Self.hash)
                let shown = await plugin.handle(json: alert.body)
                #expect(shown.disposition == .handled)
                #expect(shown.content.title == "Payment Incoming")
                #expect(shown.content.body == "Open now to receive - funds are being held")
                #expect(shown.content.interruptionLevel == .timeSensitive)
            }
        }
    }

    @Test(
        "wake_alert fallback: the silent push alone; acked handled, its alert is cancelled and never sent; without an ack exactly one alert follows"
    )
    func fallbackAlert() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let token = String(repeating: "a7", count: 32)
        let device = try await register(nds, token: token)
        let otherHash = String(repeating: "cd", count: 32)
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                // 1. Acked handled before its fallback is due: the alert is deleted unsent.
                let first = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, extra: #","wake_alert":"fallback","fallback_after_secs":30"#))
                #expect(first.status == .accepted)
                let firstID = try #require(first.json["wake_id"] as? String)
                let silent = try await servers.apns.requests.waitFor(count: 1)[0]
                #expect(silent.headers["apns-push-type"] == "background")
                #expect(silent.json?["wake_id"] as? String == firstID)
                let ack = try await client.call(
                    .post, "/api/v1/devices/\(device.device.id)/acks", key: device.secret, json: #"{"id":"\#(firstID)","outcome":"handled"}"#)
                #expect(ack.status == .noContent)
                let firstStatus = try await client.call(.get, "/api/v1/wake/\(firstID)", key: key)
                let firstDevice = try #require((firstStatus.json["devices"] as? [[String: Any]])?.first)
                #expect(firstDevice["outcome"] as? String == "handled")
                #expect(firstDevice["fallback"] as? String == "cancelled")

                // 2. Never acked: its alert comes alone, once, after a second.
                let second = try await client.call(
                    .post, "/api/v1/wake", key: key,
                    json: Self.wake(device.device.id, hash: otherHash, extra: #","wake_alert":"fallback","fallback_after_secs":1"#))
                #expect(second.status == .accepted)
                let secondID = try #require(second.json["wake_id"] as? String)
                let requests = try await servers.apns.requests.waitFor(count: 3)
                #expect(requests.map { $0.headers["apns-push-type"] } == ["background", "background", "alert"])
                let alert = requests[2]
                #expect(alert.json?["wake_id"] as? String == secondID)
                #expect(alert.json?["payment_hash"] as? String == otherHash)
                #expect((alert.json?["aps"] as? [String: Any])?["interruption-level"] as? String == "time-sensitive")
                #expect(alert.headers["apns-collapse-id"] == "wake:" + otherHash.prefix(59))
                #expect(
                    try await eventually {
                        let status = try await client.call(.get, "/api/v1/wake/\(secondID)", key: key)
                        return (status.json["devices"] as? [[String: Any]])?.first?["fallback"] as? String == "sent"
                    })
                // Every job is finished (the first fallback deleted, the rest delivered): no other alert can come.
                let counts = try await nds.store.counts()
                #expect(counts.pending == 0 && counts.delivered == 3, "\(counts)")
                #expect(try await servers.apns.requests.all.count == 3)
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                for line in ["herald_wake_fallbacks_scheduled_total 2", "herald_wake_fallbacks_cancelled_total 1", "herald_wake_fallbacks_total 1"] {
                    #expect(metrics.contains(line), "\(line)")
                }

                // 3. A delay out of range is refused before anything is pushed.
                let bad = try await client.call(
                    .post, "/api/v1/wake", key: key,
                    json: Self.wake(
                        device.device.id, hash: String(repeating: "ef", count: 32), extra: #","wake_alert":"fallback","fallback_after_secs":0"#))
                #expect(bad.status == .badRequest && bad.json["error"] as? String == "invalid_fallback_after")
                let unknown = try await client.call(
                    .post, "/api/v1/wake", key: key,
                    json: Self.wake(device.device.id, hash: String(repeating: "ef", count: 32), extra: #","wake_alert":"sometimes""#))
                #expect(unknown.status == .unprocessableContent, "\(unknown.json)")
            }
        }
    }

    @Test(
        "a received ack gives the fallback wake_fallback_grace from the ack: handled then cancels it; without handled exactly one alert comes after the grace"
    )
    func fallbackReceived() async throws {
        var made = try TestNDS()
        made.settings.wakes.fallbackGrace = 30
        let nds = made
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "a8", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                func ack(_ id: String, _ outcome: String) async throws {
                    let answer = try await client.call(
                        .post, "/api/v1/devices/\(device.device.id)/acks", key: device.secret, json: #"{"id":"\#(id)","outcome":"\#(outcome)"}"#)
                    #expect(answer.status == .noContent)
                }
                // Due 2 s after the wake; the received ack moves it 30 s past the ack.
                let wake = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, extra: #","wake_alert":"fallback","fallback_after_secs":2"#))
                let wakeID = try #require(wake.json["wake_id"] as? String)
                _ = try await servers.apns.requests.waitFor(count: 1)
                let acked = Date()
                try await ack(wakeID, "received")
                let due = try #require(try await nds.store.nextDueAt(now: Date()))
                #expect(due >= acked.addingTimeInterval(30) && due < acked.addingTimeInterval(35), "\(due.timeIntervalSince(acked))")
                // A second received (a retried request) does not move it again, nor count again.
                try await ack(wakeID, "received")
                #expect(try await nds.store.nextDueAt(now: Date()) == due)
                var status = try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key)
                var shown = try #require((status.json["devices"] as? [[String: Any]])?.first)
                #expect(shown["outcome"] as? String == "received" && shown["fallback"] as? String == "pending", "\(shown)")
                // Handled in the end: the postponed alert is deleted unsent.
                try await ack(wakeID, "handled")
                status = try await client.call(.get, "/api/v1/wake/\(wakeID)", key: key)
                shown = try #require((status.json["devices"] as? [[String: Any]])?.first)
                #expect(shown["outcome"] as? String == "handled" && shown["fallback"] as? String == "cancelled", "\(shown)")
                #expect(try await nds.store.nextDueAt(now: Date()) == nil)
                #expect(try await servers.apns.requests.all.map { $0.headers["apns-push-type"] } == ["background"])
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(
                    metrics.contains(#"herald_wake_acks_total{outcome="received"} 1"#),
                    "\(metrics.split(separator: "\n").filter { $0.contains("acks") })")
            }
        }
    }

    @Test(
        "twenty fallback wakes acked received and handled at once, in either order, by their own phones: every alert cancelled; a stranger's received moves nothing"
    )
    func concurrentAcks() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        var registered: [DeviceRegistration] = []
        for i in 0..<20 { registered.append(try await register(nds, token: String(format: "%064x", 0xb000 + i))) }
        let phones = registered
        let stranger = try await register(nds, token: String(repeating: "5e", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                var wakeIDs: [String] = []
                for (i, phone) in phones.enumerated() {
                    let wake = try await client.call(
                        .post, "/api/v1/wake", key: key,
                        json: Self.wake(
                            phone.device.id, hash: String(format: "%064x", i), extra: #","wake_alert":"fallback","fallback_after_secs":30"#))
                    #expect(wake.status == .accepted)
                    wakeIDs.append(try #require(wake.json["wake_id"] as? String))
                }
                // Another device's secret, or another device's path: the wake is not its own.
                let foreign = try await client.call(
                    .post, "/api/v1/devices/\(stranger.device.id)/acks", key: stranger.secret,
                    json: #"{"id":"\#(wakeIDs[0])","outcome":"received"}"#)
                #expect(foreign.status == .notFound && foreign.json["error"] as? String == "unknown_wake")
                let wrongSecret = try await client.call(
                    .post, "/api/v1/devices/\(phones[0].device.id)/acks", key: stranger.secret,
                    json: #"{"id":"\#(wakeIDs[0])","outcome":"received"}"#)
                #expect(wrongSecret.status == .unauthorized)
                let due = try await nds.store.nextDueAt(now: Date())
                #expect(due.map { $0.timeIntervalSinceNow < 31 } == true)

                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for (i, phone) in phones.enumerated() {
                        for outcome in i.isMultiple(of: 2) ? ["received", "handled"] : ["handled", "received"] {
                            let body = #"{"id":"\#(wakeIDs[i])","outcome":"\#(outcome)"}"#
                            group.addTask {
                                try await client.call(.post, "/api/v1/devices/\(phone.device.id)/acks", key: phone.secret, json: body).status
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.count == 40 && statuses.allSatisfy { $0 == .noContent })
                for id in wakeIDs {
                    let status = try await client.call(.get, "/api/v1/wake/\(id)", key: key)
                    let shown = try #require((status.json["devices"] as? [[String: Any]])?.first)
                    #expect(shown["outcome"] as? String == "handled" && shown["fallback"] as? String == "cancelled", "\(shown)")
                }
                #expect(try await nds.store.nextDueAt(now: Date()) == nil)
                #expect(try await servers.apns.requests.all.allSatisfy { $0.headers["apns-push-type"] == "background" })
            }
        }
    }

    /// Apple's delivery rules, header by header: the silent push is never stored and collapses
    /// nothing, the alert carries the expiry and the collapse id, and the silent push's stream
    /// was opened first on the same connection.
    static func expectAppleRules(
        silent: MockAPNsRequest, alert: MockAPNsRequest, expiry: Int, collapseID: String = "wake:" + WakeTests.hash.prefix(59)
    ) throws {
        #expect(silent.headers["apns-push-type"] == "background")
        #expect(silent.headers["apns-priority"] == "5")
        #expect(silent.headers["apns-expiration"] == "0")
        #expect(silent.headers["apns-collapse-id"] == nil)
        #expect(alert.headers["apns-push-type"] == "alert")
        #expect(alert.headers["apns-priority"] == "10")
        #expect(alert.headers["apns-expiration"] == String(expiry))
        #expect(alert.headers["apns-collapse-id"] == collapseID)
        #expect(silent.connection == alert.connection)
        let silentStream = try #require(silent.stream)
        let alertStream = try #require(alert.stream)
        #expect(silentStream < alertStream)
    }

    @Test("a phone offline during a wake gets the alert when it is back, whichever push reached APNs last")
    func offlinePhoneGetsTheAlert() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let token = String(repeating: "c4", count: 32)
        let device = try await register(nds, token: token)
        let expiry = Int(Date().timeIntervalSince1970) + 120
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                await servers.apns.devices.goOffline(token)
                let response = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, extra: #","expires_at":\#(expiry)"#)
                )
                #expect(response.status == .accepted)
                let requests = try await servers.apns.requests.waitFor(count: 2)
                #expect(requests.allSatisfy { $0.accepted })
                let silent = try #require(requests.first { $0.headers["apns-push-type"] == "background" })
                let alert = try #require(requests.first { $0.headers["apns-push-type"] == "alert" })
                try Self.expectAppleRules(silent: silent, alert: alert, expiry: expiry)

                // Back two seconds later (the look-alike's clock): APNs hands over what it held.
                let back = Date().addingTimeInterval(2)
                let received = await servers.apns.devices.comeOnline(token)
                #expect(received?.headers["apns-push-type"] == "alert")
                #expect(await servers.apns.devices.received(by: token).map { $0.headers["apns-push-type"] } == ["alert"])

                // APNs may reorder: with these headers the phone gets the alert in either order.
                for order in [[silent, alert], [alert, silent]] {
                    var slot = APNsOfflineSlot<MockAPNsRequest>()
                    for push in order { slot.arrive(push, expiration: push.headers["apns-expiration"], now: back.addingTimeInterval(-2)) }
                    #expect(slot.handOver(now: back)?.headers["apns-push-type"] == "alert")
                }
            }
        }
    }

    @Test("a device with a seal key gets both wake pushes sealed: no payment hash in clear, opened on the device, fallback with the wrong key")
    func sealedWake() async throws {
        let nds = try TestNDS()
        let metrics = HeraldMetrics()
        let key = try await nds.apiKey([.wake])
        let deviceKey = Curve25519.KeyAgreement.PrivateKey()
        let device = try await nds.store.registerDevice(
            platform: .ios, token: String(repeating: "a9", count: 32), sealKey: SealPublicKey(deviceKey.publicKey), now: Date()
        )
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers, metrics: metrics).test(.live) { client in
                let response = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, extra: #","amount_msat":250000"#)
                )
                #expect(response.status == .accepted)
                let requests = try await servers.apns.requests.waitFor(count: 2)
                let silent = try #require(requests.first { $0.headers["apns-push-type"] == "background" })
                let alert = try #require(requests.first { $0.headers["apns-push-type"] == "alert" })
                for request in [silent, alert] {
                    let json = try #require(request.json)
                    #expect(Set(json.keys) == ["aps", "sealed", "seal_kid", "sealed_type"])
                    #expect(!String(decoding: request.body, as: UTF8.self).contains(Self.hash))
                    #expect(!(request.headers["apns-collapse-id"] ?? "").contains(Self.hash.prefix(16)))
                }
                #expect(silent.json?["sealed_type"] as? String == "incoming_htlc_wake")
                #expect(alert.json?["sealed_type"] as? String == "incomingHtlc")
                #expect(NSDictionary(dictionary: silent.json?["aps"] as? [String: Any] ?? [:]) == ["content-available": 1])
                let opened = try SealedPush.open(
                    (try #require(silent.json)).compactMapValues { $0 as? String }, with: deviceKey
                )
                #expect(
                    opened.filter { $0.key != WakePushKey.wakeID } == [
                        "type": "incoming_htlc_wake", "payment_hash": Self.hash, "amount_msat": "250000",
                    ])
                #expect(opened[WakePushKey.wakeID].flatMap(UUID.init(uuidString:)) != nil)

                let folder = nds.folder.appendingPathComponent("sealed-phone")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let plugin = DevicePlugin(
                    wallet: DevelopmentWallet(folder: folder, issuer: try Bolt11InvoiceIssuer(folder: folder)), transport: URLSessionReplyTransport(),
                    configuration: DevicePluginConfiguration(sealKey: { deviceKey })
                )
                guard case .wake(let event) = plugin.decode(json: silent.body).notification else {
                    Issue.record("the sealed silent push did not open to a wake")
                    return
                }
                #expect(event.silent && event.paymentHash == Self.hash && event.amountMsat == 250_000)
                let shown = await plugin.handle(json: alert.body)
                #expect(shown.content.title == "Payment Incoming")
                #expect(shown.content.body == "Open now to receive - funds are being held")

                let stranger = DevicePlugin(
                    wallet: DevelopmentWallet(folder: folder, issuer: try Bolt11InvoiceIssuer(folder: folder)), transport: URLSessionReplyTransport(),
                    configuration: DevicePluginConfiguration(sealKey: { Curve25519.KeyAgreement.PrivateKey() })
                )
                let fallback = await stranger.handle(json: alert.body)
                #expect(fallback.content.title == "Payment Incoming")
                #expect(metrics.render().contains("herald_sealed_pushes_total 2"))
            }
        }
    }

    @Test("Android gets one high-priority data message with the wake fields and no notification block")
    func android() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, platform: .android, token: "fcm-wake-token")
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, kind: "cjitPaymentArrived", extra: #","amount_msat":1000"#)
                )
                #expect(response.status == .accepted)
                #expect((response.json["job_ids"] as? [String])?.count == 1)
                let sent = try #require(try await servers.fcm.messages.waitFor(count: 1).first)
                let message = try #require(sent.message)
                #expect(message["notification"] == nil)
                let android = try #require(message["android"] as? [String: Any])
                #expect(android["priority"] as? String == "HIGH")
                let data = try #require(message["data"] as? [String: String])
                #expect(
                    data == [
                        "type": "cjitPaymentArrived", "payment_hash": Self.hash, "amount_msat": "1000",
                        "wake_id": response.json["wake_id"] as? String ?? "?",
                    ])
                let shown = await DevicePlugin(
                    wallet: DevelopmentWallet(folder: nds.folder, issuer: try Bolt11InvoiceIssuer(folder: nds.folder)),
                    transport: URLSessionReplyTransport()
                ).handle(json: try WireJSON.encode(["data": data]))
                #expect(shown.content.body == "Open now to receive via new channel")
            }
        }
    }

    @Test("an Idempotency-Key sent again with another wake or another backend event is 422, never the earlier job")
    func reusedKeys() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake, .sessions, .events])
        let device = try await register(nds, token: String(repeating: "b9", count: 32))
        try await nds.withMockPush { _, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let idempotent: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "k-planted"]
                let planted = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id), headers: idempotent)
                #expect(planted.status == .accepted)
                let other = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, hash: String(repeating: "ef", count: 32)),
                    headers: idempotent)
                #expect(other.status == .unprocessableContent, "\(other.text)")
                #expect(other.json["error"] as? String == "idempotency_key_reused")

                try await BackendSessionTests.threeSessions(client, key: key)
                let first = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none, headers: idempotent)
                #expect(first.status == .ok || first.status == .accepted, "\(first.text)")
                let changed = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.depositReceived, headers: idempotent)
                #expect(changed.status == .unprocessableContent, "\(changed.text)")
                #expect(changed.json["error"] as? String == "idempotency_key_reused")
                let retried = try await client.call(.post, "/api/v1/users/u1/events", key: key, json: Seed002.none, headers: idempotent)
                #expect(retried.json["job_ids"] as? [String] == first.json["job_ids"] as? [String])
            }
        }
    }

    @Test("a repeat within the window is not pushed; the same Idempotency-Key gets the same jobs back")
    func repeatsAndIdempotency() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "b2", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let idempotent: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "htlc-1"]
                let first = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id), headers: idempotent)
                #expect(first.status == .accepted)
                let again = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id), headers: idempotent)
                #expect(again.status == .accepted)
                #expect(again.json["job_ids"] as? [String] == first.json["job_ids"] as? [String])
                #expect(again.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")

                let repeated = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                #expect(repeated.status == .ok)
                #expect(repeated.json["pushed"] as? Bool == false)
                #expect(repeated.json["reason"] as? String == "recently_woken")

                let otherPayment = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, hash: String(repeating: "cd", count: 32))
                )
                #expect(otherPayment.status == .accepted)
                _ = try await servers.apns.requests.waitFor(count: 4)
                // Two jobs, both delivered (two pushes each): nothing more can go out.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 2, dead: 0) })
                #expect(await servers.apns.requests.count == 4)
            }
        }
    }

    @Test("40 wakes at once for one payment push once; the rest are told recently_woken")
    func concurrentWakes() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "c3", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<40 {
                        group.addTask {
                            let response = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                            return (response.status.code, response.json["reason"] as? String)
                        }
                    }
                    var all: [(Int, String?)] = []
                    for try await result in group { all.append(result) }
                    return all
                }
                #expect(statuses.filter { $0.0 == 202 }.count == 1)
                #expect(statuses.filter { $0.0 == 200 && $0.1 == "recently_woken" }.count == 39)
                _ = try await servers.apns.requests.waitFor(count: 2)
                // One job, delivered: nothing more can go out.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 1, dead: 0) })
                #expect(await servers.apns.requests.count == 2)
            }
        }
    }

    @Test("bad callers get clear errors: no key, wrong scope, unknown device, dead token, bad fields")
    func errors() async throws {
        let nds = try TestNDS()
        let wakeKey = try await nds.apiKey([.wake])
        let eventsKey = try await nds.apiKey([.events])
        let device = try await register(nds, token: String(repeating: "d4", count: 32))
        let dead = try await register(nds, token: String(repeating: "d5", count: 32))
        try await nds.store.markDead(platform: .ios, token: dead.device.token, reason: "Unregistered", now: Date())
        try await nds.app().test(.live) { client in
            let body = Self.wake(device.device.id)
            #expect(try await client.call(.post, "/api/v1/wake", key: nil, json: body).status == .unauthorized)
            let forbidden = try await client.call(.post, "/api/v1/wake", key: eventsKey, json: body)
            #expect(forbidden.status == .forbidden)
            let unknown = try await client.call(.post, "/api/v1/wake", key: wakeKey, json: Self.wake("no-such-device"))
            #expect(unknown.status == .notFound && unknown.json["error"] as? String == "unknown_device")
            let gone = try await client.call(.post, "/api/v1/wake", key: wakeKey, json: Self.wake(dead.device.id))
            #expect(gone.status == .gone && gone.json["error"] as? String == "token_unregistered")
            let cases: [(String, String)] = [
                (Self.wake(device.device.id, kind: "no spaces"), "invalid_kind"),
                (Self.wake(device.device.id, hash: "xyz"), "invalid_payment_hash"),
                (Self.wake(device.device.id, extra: #","expires_at":1000"#), "expired"),
                (#"{"device":"\#(device.device.id)","kind":"incomingHtlc""#, "invalid_json"),
                (#"{"kind":"incomingHtlc"}"#, "invalid_body"),
            ]
            for (json, code) in cases {
                let response = try await client.call(.post, "/api/v1/wake", key: wakeKey, json: json)
                #expect(response.status.code >= 400 && response.status.code < 500, "\(json)")
                #expect(response.json["error"] as? String == code, "\(json): \(response.text)")
            }
        }
    }

    @Test("a heartbeating app gets no push; after DELETE the next wake is pushed")
    func heartbeat() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "e5", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let path = "/api/v1/devices/\(device.device.id)/presence"
                let wrong = try await client.call(.post, path, key: "not-the-secret", json: "{}")
                #expect(wrong.status == .unauthorized)
                let badTTL = try await client.call(.post, path, key: device.secret, json: #"{"ttl_seconds":301}"#)
                #expect(badTTL.status == .badRequest && badTTL.json["error"] as? String == "invalid_ttl")
                let beat = try await client.call(.post, path, key: device.secret, json: #"{"ttl_seconds":60}"#)
                #expect(beat.status == .ok && beat.json["ttl_seconds"] as? Int == 60)

                let present = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                #expect(present.status == .ok)
                #expect(present.json["pushed"] as? Bool == false && present.json["reason"] as? String == "present")

                #expect(try await client.call(.delete, path, key: device.secret).status == .noContent)
                let pushed = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                #expect(pushed.status == .accepted)
                _ = try await servers.apns.requests.waitFor(count: 2)
                // One job (the pushed wake's two pushes), delivered: the present one made none.
                #expect(try await eventually { try await nds.store.counts() == QueueCounts(pending: 0, delivered: 1, dead: 0) })
                #expect(await servers.apns.requests.count == 2)
            }
        }
    }

    @Test(
        "presence streams count and expire: a device's third closes its oldest, a full server says 503 while /health answers, a stream ends at its maximum age"
    )
    func streamLimits() async throws {
        var configured = try TestNDS()
        configured.settings.presenceKeepAlive = .milliseconds(200)
        configured.presence.maxStreams = 3
        configured.presence.maxStreamAge = .seconds(5)
        let nds = configured
        let a = try await register(nds, token: String(repeating: "a1", count: 32))
        let b = try await register(nds, token: String(repeating: "b2", count: 32))
        let c = try await register(nds, token: String(repeating: "c3", count: 32))
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { Task { try? await http.shutdown() } }
        try await nds.app().test(.live) { client in
            let port = try #require(client.port)
            /// Opens a stream; its task returns the status and everything read until it ends.
            func open(_ device: DeviceRegistration) async throws -> Task<(UInt, String), any Error> {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/devices/\(device.device.id)/presence/stream")
                request.headers.add(name: "Authorization", value: "Bearer \(device.secret)")
                let response = try await http.execute(request, timeout: .seconds(30))
                return Task {
                    var seen = ""
                    for try await chunk in response.body { seen += String(buffer: chunk) }
                    return (response.status.code, seen)
                }
            }
            let started = ContinuousClock.now
            let a1 = try await open(a)
            let a2 = try await open(a)
            _ = try await open(a)
            // The oldest of a's three ended at once.
            let (status, seen) = try await a1.value
            #expect(status == 200 && seen.hasPrefix(": connected"))
            #expect(ContinuousClock.now - started < .seconds(4))
            _ = try await open(b)
            // Three held: the server's share. Another device is told so; /health still answers.
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/devices/\(c.device.id)/presence/stream")
            request.headers.add(name: "Authorization", value: "Bearer \(c.secret)")
            let refused = try await http.execute(request, timeout: .seconds(5))
            #expect(refused.status.code == 503)
            let body = String(buffer: try await refused.body.collect(upTo: 4096))
            #expect(body.contains("too_many_streams"), "\(body)")
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            // a2 reaches its maximum age and ends by itself.
            let (_, aged) = try await a2.value
            #expect(aged.contains("keep-alive"))
            #expect(ContinuousClock.now - started >= .seconds(5))
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    @Test("an app holding the presence stream hears of the wake on it and gets no push; closing it ends presence")
    func stream() async throws {
        var configured = try TestNDS()
        configured.settings.presenceKeepAlive = .milliseconds(300)
        let nds = configured
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "f6", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let port = try #require(client.port)
                let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/devices/\(device.device.id)/presence/stream")
                request.headers.add(name: "Authorization", value: "Bearer \(device.secret)")
                let streamTask = Task {
                    let response = try await http.execute(request, timeout: .seconds(30))
                    var seen = ""
                    for try await chunk in response.body {
                        seen += String(buffer: chunk)
                        if seen.contains("event: wake"), seen.contains("keep-alive"), seen.hasSuffix("\n\n") { break }
                    }
                    return (response.status.code, response.headers["content-type"].first, seen)
                }
                // Present once the stream is open.
                #expect(
                    try await eventually {
                        try await client.call(.get, "/api/v1/forwarding_hint?recipient=\(device.device.id)", key: key).json["hint"] as? String
                            == "retry_now"
                    })
                let answer = try await client.call(
                    .post, "/api/v1/wake", key: key, json: Self.wake(device.device.id, extra: #","amount_msat":5000"#)
                )
                #expect(answer.status == .ok && answer.json["reason"] as? String == "present")
                let (status, contentType, seen) = try await streamTask.value
                #expect(status == 200 && contentType == "text/event-stream")
                #expect(seen.hasPrefix(": connected\n\n"))
                let expected = #"event: wake\#ndata: {"amount_msat":5000,"kind":"incomingHtlc","payment_hash":"\#(Self.hash)"}\#n\#n"#
                #expect(seen.contains(expected), "\(seen)")

                // The client hung up: no longer present, so the next wake is pushed.
                try await http.shutdown()
                #expect(
                    try await eventually {
                        try await client.call(.get, "/api/v1/forwarding_hint?recipient=\(device.device.id)", key: key).json["hint"] as? String
                            != "retry_now"
                    })
                let pushed = try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id))
                #expect(pushed.status == .accepted)
                _ = try await servers.apns.requests.waitFor(count: 2)
            }
        }
    }

    @Test("graceful shutdown ends a held presence stream instead of waiting for it forever")
    func shutdownEndsStreams() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "f7", count: 32))
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let started = ContinuousClock.now
        let streamTask = try await nds.app().test(.live) { client in
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1/devices/\(device.device.id)/presence/stream")
            request.headers.add(name: "Authorization", value: "Bearer \(device.secret)")
            let task = Task {
                let response = try await http.execute(request, timeout: .seconds(60))
                var seen = ""
                for try await chunk in response.body { seen += String(buffer: chunk) }
                return seen
            }
            #expect(
                try await eventually {
                    try await client.call(.get, "/api/v1/forwarding_hint?recipient=\(device.device.id)", key: key).json["hint"] as? String
                        == "retry_now"
                })
            return task
        }
        // The app stopped (its test closure returned): the stream must have ended with it.
        let seen = try await streamTask.value
        #expect(seen == ": connected\n\n")
        #expect(ContinuousClock.now - started < .seconds(10))
        try await http.shutdown()
    }

    @Test(
        "hints follow the device: unknown → do_not_retry, away → retry_later, woken → retry_later with what is left, present → retry_now, dead → do_not_retry"
    )
    func hints() async throws {
        let nds = try TestNDS()
        let clock = TestClock()
        let metrics = HeraldMetrics()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "a7", count: 32))
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers, metrics: metrics, now: clock.function).test(.live) { client in
                func hint(_ id: String = device.device.id) async throws -> (String?, String?, Int?) {
                    let response = try await client.call(.get, "/api/v1/forwarding_hint?recipient=\(id)&amount_msat=1000", key: key)
                    #expect(response.status == .ok)
                    return (response.json["hint"] as? String, response.json["reason"] as? String, response.json["recommended_delay_ms"] as? Int)
                }
                #expect(try await hint("nobody") == ("do_not_retry", "unknown_device", nil))
                #expect(try await hint() == ("retry_later", "disconnected", 10_000))

                #expect(try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id)).status == .accepted)
                clock.advance(by: .seconds(3))
                #expect(try await hint() == ("retry_later", "waking", 7_000))

                clock.advance(by: .seconds(1))
                let beat = try await client.call(
                    .post, "/api/v1/devices/\(device.device.id)/presence", key: device.secret, json: #"{"ttl_seconds":5}"#)
                #expect(beat.status == .ok)
                #expect(try await hint() == ("retry_now", "present", 250))

                // The heartbeat ran out: away again, and the next wake is expected to take what this one did.
                clock.advance(by: .seconds(6))
                #expect(try await hint() == ("retry_later", "disconnected", 4_000))

                try await nds.store.markDead(platform: .ios, token: device.device.token, reason: "Unregistered", now: Date())
                #expect(try await hint() == ("do_not_retry", "token_unregistered", nil))
                let missing = try await client.call(.get, "/api/v1/forwarding_hint", key: key)
                #expect(missing.status == .badRequest && missing.json["error"] as? String == "missing_recipient")
                _ = servers

                let text = try await client.execute(uri: "/metrics", method: .get).text
                #expect(text.contains(#"herald_wakes_requested_total{kind="incomingHtlc"} 1"#))
                #expect(text.contains(#"herald_wake_pushes_total{push="silent"} 1"#))
                #expect(text.contains(#"herald_wake_pushes_total{push="alert"} 1"#))
                #expect(text.contains(#"herald_forwarding_hints_total{hint="retry_later"} 3"#))
                #expect(text.contains(#"herald_forwarding_hints_total{hint="retry_now"} 1"#))
                #expect(text.contains(#"herald_forwarding_hints_total{hint="do_not_retry"} 2"#))
                #expect(text.contains("herald_wake_to_presence_seconds_count 1"))
            }
        }
    }

    @Test("a device on a platform with no push provider gets do_not_retry / no_push_provider")
    func noPushProvider() async throws {
        let nds = try TestNDS()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, platform: .android, token: "fcm-nowhere")
        let iosOnly = PushRouter(ios: LocalDevelopmentProvider(recorder: { _ in }), android: nil)
        try await nds.app(providers: iosOnly).test(.live) { client in
            let response = try await client.call(.get, "/api/v1/forwarding_hint?recipient=\(device.device.id)", key: key)
            #expect(response.status == .ok)
            #expect(response.json["hint"] as? String == "do_not_retry")
            #expect(response.json["reason"] as? String == "no_push_provider")
        }
    }

    @Test("skipped wakes are counted by reason")
    func skippedCounters() async throws {
        let nds = try TestNDS()
        let metrics = HeraldMetrics()
        let key = try await nds.apiKey([.wake])
        let device = try await register(nds, token: String(repeating: "b8", count: 32))
        try await nds.withMockPush { _, providers in
            try await nds.app(providers: providers, metrics: metrics).test(.live) { client in
                #expect(try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id)).status == .accepted)
                #expect(try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id)).status == .ok)
                _ = try await client.call(.post, "/api/v1/devices/\(device.device.id)/presence", key: device.secret, json: "{}")
                #expect(try await client.call(.post, "/api/v1/wake", key: key, json: Self.wake(device.device.id)).status == .ok)
                let text = try await client.execute(uri: "/metrics", method: .get).text
                #expect(text.contains(#"herald_wakes_skipped_total{reason="recently_woken"} 1"#))
                #expect(text.contains(#"herald_wakes_skipped_total{reason="present"} 1"#))
                #expect(text.contains(#"herald_wakes_requested_total{kind="incomingHtlc"} 3"#))
            }
        }
    }
}

@Suite("Presence registry")
struct PresenceRegistryTests {
    /// Wakes a device at `start` and has it show up `after` seconds later: one sample.
    static func sample(_ registry: PresenceRegistry, _ device: String, after: TimeInterval, start: Date) {
        registry.woke(deviceID: device, now: start)
        registry.heartbeat(deviceID: device, ttl: 1, now: start.addingTimeInterval(after))
    }

    @Test("a waking device's remaining time is conditioned on its not being here yet")
    func conditionedRemaining() {
        let registry = PresenceRegistry()
        let start = Date(timeIntervalSince1970: 1_000_000)
        #expect(registry.expectedWakeTime == 10)
        for (index, seconds) in [2.0, 2.0, 8.0].enumerated() {
            Self.sample(registry, "seen-\(index)", after: seconds, start: start)
        }
        #expect(registry.expectedWakeTime == 2)
        registry.woke(deviceID: "late", now: start)
        #expect(registry.standing(deviceID: "late", now: start) == .waking(elapsed: 0, remaining: 2))
        // Not here after 3 s: of those seen, only the 8 s one took longer.
        #expect(registry.standing(deviceID: "late", now: start.addingTimeInterval(3)) == .waking(elapsed: 3, remaining: 5))
        // Slower than anything seen: the default is the guess, at least 1 s.
        #expect(registry.standing(deviceID: "late", now: start.addingTimeInterval(8.5)) == .waking(elapsed: 8.5, remaining: 1.5))
        #expect(registry.standing(deviceID: "late", now: start.addingTimeInterval(9.5)) == .waking(elapsed: 9.5, remaining: 1))
        #expect(registry.standing(deviceID: "late", now: start.addingTimeInterval(31)) == .away(expected: 2))
    }

    @Test("each heartbeat renews presence for its TTL from its arrival: beats at half the TTL keep a device present past one TTL")
    func heartbeatsRenew() {
        let registry = PresenceRegistry()
        let start = Date(timeIntervalSince1970: 1_000_000)
        for beat in 0...3 { registry.heartbeat(deviceID: "beating", ttl: 2, now: start.addingTimeInterval(TimeInterval(beat))) }
        registry.heartbeat(deviceID: "once", ttl: 2, now: start)
        #expect(registry.isPresent(deviceID: "beating", now: start.addingTimeInterval(3.5)))
        #expect(registry.isPresent(deviceID: "beating", now: start.addingTimeInterval(4.9)))
        #expect(!registry.isPresent(deviceID: "beating", now: start.addingTimeInterval(5.1)))
        // One beat alone is gone after its TTL.
        #expect(registry.isPresent(deviceID: "once", now: start.addingTimeInterval(1.9)))
        #expect(!registry.isPresent(deviceID: "once", now: start.addingTimeInterval(2.1)))
    }

    @Test("the maps stay bounded however many devices callers invent")
    func bounded() {
        var configuration = PresenceRegistry.Configuration()
        configuration.maxEntries = 1_000
        let registry = PresenceRegistry(configuration: configuration)
        let now = Date()
        for index in 0..<5_000 {
            registry.heartbeat(deviceID: "d\(index)", ttl: 300, now: now)
            _ = registry.claimWake(repeatKey: "k\(index)", idempotencyKey: nil, now: now)
            registry.woke(deviceID: "w\(index)", now: now)
        }
        #expect(registry.isPresent(deviceID: "d4999", now: now))
        let present = (0..<5_000).filter { registry.isPresent(deviceID: "d\($0)", now: now) }.count
        #expect(present <= 1_001)
    }
}
