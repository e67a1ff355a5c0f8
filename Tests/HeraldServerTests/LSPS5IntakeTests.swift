import Foundation
import HTTPTypes
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice
import HeraldLSPS5
import HeraldPush
import HeraldSecp256k1
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HeraldWire
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// LSPS5 (bLIP-55) notifications posted by an LSP to a device's webhook URL, against the APNs
/// look-alike, signed by Herald's own signer as an LSP would sign them.
@Suite("LSPS5 notifications on a device's webhook URL")
struct LSPS5IntakeTests {
    static let lspKey = NodeSecretKey(hex: String(repeating: "11", count: 32))!
    static let otherKey = NodeSecretKey(hex: String(repeating: "22", count: 32))!
    static let lsp = LSPS5Signer(key: lspKey)
    static let lsps5Keys: Set<String> = [
        "aps", "type", LSPS5PushKey.method, LSPS5PushKey.params, LSPS5PushKey.body, LSPS5PushKey.timestamp,
        LSPS5PushKey.signature, LSPS5PushKey.nodeID, LSPS5PushKey.verified,
        // The wake's id, which the plugin acknowledges.
        WakePushKey.wakeID,
    ]

    struct Phone {
        var deviceID: String
        var secret: String
        /// The webhook URL's path and query: what the wallet hands its LSP in `lsps5.set_webhook`.
        var path: String
    }

    /// Registers through the API, as an app would, with its LSP's node id or none.
    static func register(_ client: some TestClientProtocol, token: String, nodeID: NodeID? = lspKey.nodeID) async throws -> Phone {
        let node = nodeID.map { #","lsp_node_id":"\#($0.hex)""# } ?? ""
        let response = try await client.post("/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(token)"\#(node)}"#)
        #expect(response.status == .created)
        #expect(response.json["lsp_node_id"] as? String == nodeID?.hex)
        let url = try #require(response.json["webhook_url"] as? String)
        return Phone(
            deviceID: try #require(response.json["device_id"] as? String),
            secret: try #require(response.json["device_secret"] as? String),
            path: String(url.dropFirst("http://nds.test".count))
        )
    }

    static func send(_ client: some TestClientProtocol, _ path: String, _ signed: LSPS5SignedNotification) async throws -> TestResponse {
        var headers = HTTPFields()
        for (name, value) in signed.headers { headers[HTTPField.Name(name)!] = value }
        return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: signed.body))
    }

    /// Nothing was committed for a push: the outbox holds exactly `jobs` jobs, whatever their state.
    static func expectJobs(_ nds: TestNDS, _ jobs: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let counts = try await nds.store.counts()
        #expect(counts.pending + counts.delivered + counts.dead == jobs, sourceLocation: sourceLocation)
    }

    // MARK: Each method

    struct MethodCase: Sendable, CustomTestStringConvertible {
        var notification: LSPS5Notification
        var silentType: String
        var alertType: String
        var alertTitle: String
        /// What the device plugin shows for the alert push; nil for a method it hands to the app.
        var shown: (title: String, body: String)?
        var testDescription: String { notification.method.name }
    }

    static let methods: [MethodCase] = [
        MethodCase(
            notification: LSPS5Notification(method: .paymentIncoming), silentType: "incoming_htlc_wake", alertType: "incomingHtlc",
            alertTitle: "Payment Incoming", shown: ("Payment Incoming", "Open now to receive - funds are being held")
        ),
        MethodCase(
            notification: LSPS5Notification(method: .onionMessageIncoming), silentType: "incoming_htlc_wake",
            alertType: "incomingHtlc", alertTitle: "Payment Incoming",
            shown: ("Payment Incoming", "Open now to receive - funds are being held")
        ),
        MethodCase(
            notification: LSPS5Notification(method: .liquidityManagementRequest), silentType: "liquidityManagementRequest",
            alertType: "liquidityManagementRequest", alertTitle: "Channel Update",
            shown: ("Channel Update", "Open the app so your Lightning service provider can adjust your channel")
        ),
        MethodCase(
            notification: .expirySoon(timeout: 840_123), silentType: "expirySoon", alertType: "expirySoon",
            alertTitle: "Action Needed", shown: ("Action Needed", "Open the app now to keep your channel open")
        ),
        MethodCase(
            notification: LSPS5Notification(method: .other("lsps5.future_thing"), params: ["x": .int(1)]),
            silentType: "lsps5.future_thing", alertType: "lsps5.future_thing", alertTitle: "Wallet activity", shown: nil
        ),
    ]

    @Test(
        "each waking method gets a silent push and an alert on APNs carrying the signed notification, and the plugin shows its text",
        arguments: methods)
    func methodPushes(_ method: MethodCase) async throws {
        let nds = try TestNDS()
        let token = String(repeating: "c1", count: 32)
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: token)
                let signed = Self.lsp.sign(method.notification, at: Date())
                let response = try await Self.send(client, phone.path, signed)
                #expect(response.status == .ok)
                #expect(response.json["pushed"] as? Bool == true)
                #expect((response.json["job_ids"] as? [String])?.count == 1)

                let requests = try await servers.apns.requests.waitFor(count: 2)
                let silent = try #require(requests.first { $0.headers["apns-push-type"] == "background" })
                let alert = try #require(requests.first { $0.headers["apns-push-type"] == "alert" })
                #expect(silent.headers["apns-priority"] == "5")
                #expect(alert.headers["apns-priority"] == "10")
                #expect(silent.headers["apns-collapse-id"] == nil)
                #expect(alert.headers["apns-collapse-id"] == "wake:" + method.alertType)
                for request in [silent, alert] {
                    #expect(request.deviceToken == token)
                    let json = try #require(request.json)
                    #expect(Set(json.keys) == Self.lsps5Keys)
                    #expect(json[LSPS5PushKey.method] as? String == method.notification.method.name)
                    #expect(json[LSPS5PushKey.body] as? String == String(decoding: signed.body, as: UTF8.self))
                    #expect(json[LSPS5PushKey.timestamp] as? String == signed.timestamp)
                    #expect(json[LSPS5PushKey.signature] as? String == signed.signature)
                    #expect(json[LSPS5PushKey.nodeID] as? String == Self.lspKey.nodeID.hex)
                    #expect(json[LSPS5PushKey.verified] as? String == "true")
                    let params = try #require(json[LSPS5PushKey.params] as? String)
                    #expect(
                        try LSPS5Notification(parsing: Array(#"{"jsonrpc":"2.0","method":"m","params":\#(params)}"#.utf8)).params
                            == method.notification.params)
                    // What the wallet can do on the device: check the LSP's signature once more.
                    let message = LSPS5Webhook.signedMessage(
                        timestamp: try #require(json[LSPS5PushKey.timestamp] as? String),
                        body: Array(try #require(json[LSPS5PushKey.body] as? String).utf8)
                    )
                    #expect(LightningMessageSignature.verify(message, signature: signed.signature, nodeID: Self.lspKey.nodeID))
                }
                #expect(NSDictionary(dictionary: silent.json?["aps"] as? [String: Any] ?? [:]) == ["content-available": 1])
                #expect(silent.json?["type"] as? String == method.silentType)
                #expect(alert.json?["type"] as? String == method.alertType)
                let aps = try #require(alert.json?["aps"] as? [String: Any])
                #expect(aps["mutable-content"] as? Int == 1)
                #expect((aps["alert"] as? [String: Any])?["title"] as? String == method.alertTitle)

                // The alert, byte for byte as APNs got it, through the device plugin.
                let folder = nds.folder.appendingPathComponent("phone")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let plugin = DevicePlugin(
                    wallet: DevelopmentWallet(folder: folder, issuer: try Bolt11InvoiceIssuer(folder: folder)), transport: URLSessionReplyTransport())
                let decoded = IncomingPush(json: alert.body).notification
                if let shown = method.shown {
                    guard case .wake(let event) = decoded else {
                        Issue.record("the alert did not decode as a wake: \(decoded)")
                        return
                    }
                    #expect(event.lsps5?.method == method.notification.method.name)
                    #expect(event.lsps5?.signature == signed.signature && event.lsps5?.verified == true)
                    #expect(event.lsps5?.timeout == method.notification.timeout)
                    let result = await plugin.handle(json: alert.body)
                    #expect(result.content.title == shown.title)
                    #expect(result.content.body == shown.body)
                } else {
                    guard case .custom(let custom) = decoded else {
                        Issue.record("an unknown method did not pass through to the app: \(decoded)")
                        return
                    }
                    #expect(custom.type.rawValue == method.notification.method.name)
                    #expect(custom.payloadJSON == .object(method.notification.params))
                }
            }
        }
    }

    @Test("on Android lsps5.expiry_soon is one high-priority data message carrying the notification, shown by the plugin")
    func android() async throws {
        let nds = try TestNDS()
        let registration = try await nds.store.registerDevice(
            platform: .android, token: "fcm-lsps5-token", sealKey: nil, app: Device.defaultApp,
            extras: DeviceExtras(lspNodeID: Self.lspKey.nodeID.hex), now: Date())
        let signed = Self.lsp.sign(.expirySoon(timeout: 900_000), at: Date())
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let response = try await Self.send(client, "/api/v1/notify?token=\(registration.device.alias)", signed)
                #expect(response.status == .ok && (response.json["job_ids"] as? [String])?.count == 1)
                let sent = try #require(try await servers.fcm.messages.waitFor(count: 1).first)
                let message = try #require(sent.message)
                #expect(message["notification"] == nil)
                #expect((message["android"] as? [String: Any])?["priority"] as? String == "HIGH")
                var data = try #require(message["data"] as? [String: String])
                #expect(data.removeValue(forKey: WakePushKey.wakeID).flatMap(UUID.init(uuidString:)) != nil)
                #expect(
                    data == [
                        "type": "expirySoon", LSPS5PushKey.method: "lsps5.expiry_soon", LSPS5PushKey.params: #"{"timeout":900000}"#,
                        LSPS5PushKey.body: String(decoding: signed.body, as: UTF8.self), LSPS5PushKey.timestamp: signed.timestamp,
                        LSPS5PushKey.signature: signed.signature, LSPS5PushKey.nodeID: Self.lspKey.nodeID.hex,
                        LSPS5PushKey.verified: "true",
                    ])
                let plugin = DevicePlugin(
                    wallet: DevelopmentWallet(folder: nds.folder, issuer: try Bolt11InvoiceIssuer(folder: nds.folder)),
                    transport: URLSessionReplyTransport())
                let push = try WireJSON.encode(["data": data])
                guard case .wake(let event) = plugin.decode(json: push).notification else {
                    Issue.record("the data message did not decode as a wake")
                    return
                }
                #expect(event.kind == .expirySoon && event.lsps5?.timeout == 900_000)
                let shown = await plugin.handle(json: push)
                #expect(shown.content.title == "Action Needed" && shown.content.interruptionLevel == .timeSensitive)
            }
        }
    }

    @Test("lsps5.webhook_registered is answered 200 and pushes nothing")
    func webhookRegistered() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c2", count: 32))
                let response = try await Self.send(
                    client, phone.path, Self.lsp.sign(LSPS5Notification(method: .webhookRegistered), at: Date()))
                #expect(response.status == .ok)
                #expect(response.json["pushed"] as? Bool == false && response.json["reason"] as? String == "acknowledged")
                try await Self.expectJobs(nds, 0)
                #expect(await servers.apns.requests.count == 0)
            }
        }
    }

    // MARK: Checks

    @Test("a replayed notification gets 409 replayed and no push, also after a restart on the same SQLite file")
    func replay() async throws {
        let first = try TestNDS()
        let registration = try await first.store.registerDevice(
            platform: .ios, token: String(repeating: "c3", count: 32), sealKey: nil, app: Device.defaultApp,
            extras: DeviceExtras(lspNodeID: Self.lspKey.nodeID.hex), now: Date())
        let path = "/api/v1/notify?platform=ios&token=\(registration.device.alias)"
        let signed = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())
        try await first.withMockPush { servers, providers in
            try await first.app(providers: providers).test(.live) { client in
                #expect(try await Self.send(client, path, signed).status == .ok)
                _ = try await servers.apns.requests.waitFor(count: 2)
                let again = try await Self.send(client, path, signed)
                #expect(again.status == .conflict && again.json["error"] as? String == "replayed")
            }
        }
        try await Self.expectJobs(first, 1)

        let second = try TestNDS(folder: first.folder)
        try await second.withMockPush { servers, providers in
            try await second.app(providers: providers).test(.live) { client in
                let replayed = try await Self.send(client, path, signed)
                #expect(replayed.status == .conflict && replayed.json["error"] as? String == "replayed")
                try await Self.expectJobs(second, 1)
                // A fresh notification from the same LSP still wakes the phone.
                let fresh = Self.lsp.sign(LSPS5Notification(method: .liquidityManagementRequest), at: Date().addingTimeInterval(1))
                #expect(try await Self.send(client, path, fresh).status == .ok)
                let requests = try await servers.apns.requests.waitFor(count: 2)
                #expect(requests.allSatisfy { $0.json?[LSPS5PushKey.method] as? String == "lsps5.liquidity_management_request" })
            }
        }
    }

    /// The same signature in its other valid form: `(r, n−s)` with the other recovery id. Both
    /// recover the LSP's key over the same message.
    static func malleated(_ signature: String) -> String {
        var bytes = ZBase32.decode(signature)!
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
            0xBA, 0xAE, 0xDC, 0xE6, 0xAF, 0x48, 0xA0, 0x3B, 0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41,
        ]
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(bytes[33 + index]) - borrow
            bytes[33 + index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        bytes[0] = 31 + ((bytes[0] - 31) ^ 1)
        return ZBase32.encode(bytes)
    }

    @Test("the same notification under its signature's other form (r, n−s) is a replay: 409, no second push")
    func malleatedReplay() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c7", count: 32))
                let signed = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                var twin = signed
                twin.signature = Self.malleated(signed.signature)
                #expect(twin.signature != signed.signature)
                #expect(try await Self.send(client, phone.path, signed).status == .ok)
                _ = try await servers.apns.requests.waitFor(count: 2)
                let again = try await Self.send(client, phone.path, twin)
                #expect(again.status == .conflict, "\(again.text)")
                #expect(again.json["error"] as? String == "replayed")
                // The other order too: the high-S form first, then the original.
                let second = Self.lsp.sign(LSPS5Notification(method: .liquidityManagementRequest), at: Date().addingTimeInterval(1))
                var secondTwin = second
                secondTwin.signature = Self.malleated(second.signature)
                #expect(try await Self.send(client, phone.path, secondTwin).status == .ok)
                #expect(try await Self.send(client, phone.path, second).status == .conflict)
            }
        }
        try await Self.expectJobs(nds, 2)
    }

    @Test("a timestamp more than 10 minutes from Herald's injected clock gets 401 stale_timestamp and no push, either way")
    func staleTimestamp() async throws {
        let nds = try TestNDS()
        // Herald's clock runs an hour ahead of this machine's: only it counts.
        let skew: TimeInterval = 3600
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers, now: { Date().addingTimeInterval(skew) }).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c4", count: 32))
                let notification = LSPS5Notification(method: .paymentIncoming)
                for offset: TimeInterval in [0, skew - 660, skew + 660] {
                    let response = try await Self.send(client, phone.path, Self.lsp.sign(notification, at: Date().addingTimeInterval(offset)))
                    #expect(response.status == .unauthorized, "offset \(offset)")
                    #expect(response.json["error"] as? String == "stale_timestamp", "offset \(offset)")
                }
                try await Self.expectJobs(nds, 0)
                let fresh = try await Self.send(client, phone.path, Self.lsp.sign(notification, at: Date().addingTimeInterval(skew - 540)))
                #expect(fresh.status == .ok)
                _ = try await servers.apns.requests.waitFor(count: 2)
            }
        }
    }

    @Test("a notification signed by another node than the registered LSP gets 401 invalid_signature and no push")
    func wrongKey() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c5", count: 32))
                let forged = LSPS5Signer(key: Self.otherKey).sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                let response = try await Self.send(client, phone.path, forged)
                #expect(response.status == .unauthorized)
                #expect(response.json["error"] as? String == "invalid_signature")
                try await Self.expectJobs(nds, 0)
                #expect(await servers.apns.requests.count == 0)
            }
        }
    }

    @Test("a flipped byte in the body, the timestamp or the signature gets 401 invalid_signature and no push")
    func flippedBytes() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c6", count: 32))
                let signed = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())

                var body = signed
                let at = try #require(body.body.indices.first { body.body[$0] == UInt8(ascii: "i") })  // payment_[i]ncoming
                body.body[at] = UInt8(ascii: "j")
                var timestamp = signed
                timestamp.timestamp = String(signed.timestamp.dropLast(2)) + (signed.timestamp.dropLast().last == "9" ? "8Z" : "9Z")
                var signature = signed
                let middle = signed.signature.index(signed.signature.startIndex, offsetBy: 20)
                signature.signature.replaceSubrange(middle...middle, with: signed.signature[middle] == "y" ? "b" : "y")

                for (name, flipped) in [("body", body), ("timestamp", timestamp), ("signature", signature)] {
                    let response = try await Self.send(client, phone.path, flipped)
                    #expect(response.status == .unauthorized, "\(name)")
                    #expect(response.json["error"] as? String == "invalid_signature", "\(name)")
                }
                try await Self.expectJobs(nds, 0)
                #expect(await servers.apns.requests.count == 0)
                // The untouched one is still good: nothing above was remembered as taken.
                #expect(try await Self.send(client, phone.path, signed).status == .ok)
            }
        }
    }

    @Test("a device whose app is present is not pushed: 200 with reason present")
    func presentDevice() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c7", count: 32))
                let beat = try await client.call(
                    .post, "/api/v1/devices/\(phone.deviceID)/presence", key: phone.secret, json: #"{"ttl_seconds":60}"#)
                #expect(beat.status == .ok)
                let response = try await Self.send(client, phone.path, Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date()))
                #expect(response.status == .ok)
                #expect(response.json["pushed"] as? Bool == false && response.json["reason"] as? String == "present")
                try await Self.expectJobs(nds, 0)
                #expect(await servers.apns.requests.count == 0)
            }
        }
    }

    @Test("40 identical notifications at once: exactly one is taken and pushed, the rest get 409 replayed")
    func concurrentIdentical() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c8", count: 32))
                let signed = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<40 { group.addTask { try await Self.send(client, phone.path, signed).status } }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1)
                #expect(statuses.filter { $0 == .conflict }.count == 39)
                _ = try await servers.apns.requests.waitFor(count: 2)
                try await Self.expectJobs(nds, 1)
            }
        }
    }

    @Test(
        "without a registered node id a validly signed notification is taken and marked unverified; a bad signature is still 401; both are counted"
    )
    func unverified() async throws {
        let nds = try TestNDS()
        let metrics = HeraldMetrics()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers, metrics: metrics).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "c9", count: 32), nodeID: nil)
                var garbled = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                garbled.signature = "not-a-signature"
                let bad = try await Self.send(client, phone.path, garbled)
                #expect(bad.status == .unauthorized && bad.json["error"] as? String == "invalid_signature")

                let signed = LSPS5Signer(key: Self.otherKey).sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                #expect(try await Self.send(client, phone.path, signed).status == .ok)
                let requests = try await servers.apns.requests.waitFor(count: 2)
                for request in requests {
                    #expect(request.json?[LSPS5PushKey.verified] as? String == "false")
                    #expect(request.json?[LSPS5PushKey.nodeID] as? String == Self.otherKey.nodeID.hex)
                }
                let text = try await client.execute(uri: "/metrics", method: .get).text
                #expect(text.contains(#"herald_lsps5_notifications_total{method="lsps5.payment_incoming",verified="false"} 1"#))
                #expect(text.contains(#"herald_lsps5_refused_total{reason="invalid_signature"} 1"#))
                #expect(text.contains(#"herald_wakes_requested_total{kind="incomingHtlc"} 1"#))
                #expect(text.contains(#"herald_wake_pushes_total{push="alert"} 1"#))
            }
        }
    }

    @Test("bodies and headers that are not an LSPS5 notification get 400 invalid_json or invalid_notification")
    func badRequests() async throws {
        let nds = try TestNDS()
        try await nds.withMockPush { servers, providers in
            try await nds.app(providers: providers).test(.live) { client in
                let phone = try await Self.register(client, token: String(repeating: "ca", count: 32))
                let cases: [(body: String, error: String)] = [
                    ("{", "invalid_json"),
                    (#"{"jsonrpc":"1.0","method":"lsps5.payment_incoming","params":{}}"#, "invalid_notification"),
                    (#"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":{},"id":1}"#, "invalid_notification"),
                    (#"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":[]}"#, "invalid_notification"),
                    (#"{"jsonrpc":"2.0","method":"lsps5.expiry_soon","params":{}}"#, "invalid_notification"),
                    (#"{"jsonrpc":"2.0","method":"lsps5.no spaces","params":{}}"#, "invalid_notification"),
                ]
                for (body, error) in cases {
                    let response = try await Self.send(
                        client, phone.path, Self.lsp.sign(body: Array(body.utf8), timestamp: ISOTimestamp.text(Date())))
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(response.json["error"] as? String == error, "\(body)")
                }
                var undated = Self.lsp.sign(LSPS5Notification(method: .paymentIncoming), at: Date())
                undated.timestamp = "yesterday"
                let badTime = try await Self.send(client, phone.path, undated)
                #expect(badTime.status == .badRequest && badTime.json["error"] as? String == "invalid_notification")
                let unsigned = try await client.post(phone.path, json: #"{"jsonrpc":"2.0","method":"lsps5.payment_incoming","params":{}}"#)
                #expect(unsigned.status == .badRequest && unsigned.json["error"] as? String == "invalid_notification")
                try await Self.expectJobs(nds, 0)
                #expect(await servers.apns.requests.count == 0)
            }
        }
    }

    @Test("lsp_node_id is checked at registration and on PUT, where it can be set, kept and removed")
    func nodeIDRegistration() async throws {
        let nds = try TestNDS()
        try await nds.app().test(.router) { client in
            for bad in ["xyz", "04" + String(repeating: "a1", count: 32), "02" + String(repeating: "ff", count: 32)] {
                let response = try await client.post(
                    "/api/v1/devices", json: #"{"platform":"ios","push_token":"\#(String(repeating: "cb", count: 32))","lsp_node_id":"\#(bad)"}"#)
                #expect(response.status == .badRequest, "\(bad)")
                #expect(response.json["error"] as? String == "invalid_lsp_node_id", "\(bad)")
            }
            let phone = try await Self.register(client, token: String(repeating: "cc", count: 32), nodeID: nil)
            let token = String(repeating: "cd", count: 32)
            func put(_ extra: String) async throws -> TestResponse {
                try await client.call(
                    .put, "/api/v1/devices/\(phone.deviceID)", key: phone.secret, json: #"{"push_token":"\#(token)"\#(extra)}"#)
            }
            let set = try await put(#","lsp_node_id":"\#(Self.lspKey.nodeID.hex.uppercased())""#)
            #expect(set.status == .ok && set.json["lsp_node_id"] as? String == Self.lspKey.nodeID.hex)
            #expect(try await nds.store.lspNodeID(deviceID: phone.deviceID) == Self.lspKey.nodeID.hex)
            let kept = try await put("")
            #expect(kept.json["lsp_node_id"] as? String == Self.lspKey.nodeID.hex)
            let wrong = try await put(#","lsp_node_id":"02ab""#)
            #expect(wrong.status == .badRequest && wrong.json["error"] as? String == "invalid_lsp_node_id")
            let removed = try await put(#","lsp_node_id":"""#)
            #expect(removed.status == .ok && removed.json["lsp_node_id"] == nil)
            #expect(try await nds.store.lspNodeID(deviceID: phone.deviceID) == nil)
        }
    }
}
