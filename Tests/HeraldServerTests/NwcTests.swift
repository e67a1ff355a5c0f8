import Foundation
import HTTPTypes
import HeraldNostr
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

@testable import HeraldPush
@testable import HeraldServer

/// Nostr Wallet Connect while the phone sleeps (issue 36): the registration breez-lnurl's
/// clients send, Herald's subscriptions on two relay look-alikes, and the `nwc_event` push.
@Suite("NWC: Herald watches the relays and wakes the wallet")
struct NwcTests {
    /// A wallet with its node key (signing registrations), its NWC service key and an app's key.
    struct Wallet {
        let node = NodeSecretKey.random()
        let service = NostrSecretKey.generate().key
        let app = NostrSecretKey.generate().key

        func registration(webhook: String, relays: [String], signer: NodeSecretKey? = nil) -> String {
            let message = "\(webhook)-\(service.publicKeyHex)-\(app.publicKeyHex)-[\(relays.joined(separator: " "))]"
            let signature = LightningMessageSignature.sign(message, with: signer ?? node)
            let relayList = relays.map { "\"\($0)\"" }.joined(separator: ",")
            return
                #"{"webhookUrl":"\#(webhook)","walletServicePubkey":"\#(service.publicKeyHex)","appPubkey":"\#(app.publicKeyHex)","relays":[\#(relayList)],"signature":"\#(signature)"}"#
        }

        func unregistration(time: Int64) -> String {
            let signature = LightningMessageSignature.sign("\(time)-\(service.publicKeyHex)-\(app.publicKeyHex)", with: node)
            return
                #"{"time":\#(time),"walletServicePubkey":"\#(service.publicKeyHex)","appPubkey":"\#(app.publicKeyHex)","signature":"\#(signature)"}"#
        }

        /// A NIP-47 request from `author` (the app unless told), NIP-44 encrypted to the service.
        func request(_ method: String, author: NostrSecretKey? = nil, tags extra: [[String]] = [], createdAt: Int64? = nil) throws -> NostrEvent {
            let author = author ?? app
            let key = try NIP44.conversationKey(secret: author, publicKeyHex: service.publicKeyHex)
            let content = try NIP44.encrypt(#"{"method":"\#(method)","params":{}}"#, conversationKey: key)
            return NostrEvent.signed(
                kind: NwcKind.request, tags: [["p", service.publicKeyHex], ["encryption", "nip44_v2"]] + extra, content: content,
                createdAt: createdAt ?? Int64(Date().timeIntervalSince1970), by: author)
        }
    }

    /// - Parameter base: The NDS to configure for the relays; a fresh one when nil.
    static func withRelays(
        from base: TestNDS? = nil, subscriptionLimit: Int? = nil, information: String? = nil,
        _ body: @Sendable (_ nds: TestNDS, _ relays: [(MockNostrRelay, String)]) async throws -> Void
    ) async throws {
        let certificate = try TestCertificate.make()
        let first = MockNostrRelay(certificate: certificate, subscriptionLimit: subscriptionLimit, information: information)
        let second = MockNostrRelay(certificate: certificate, subscriptionLimit: subscriptionLimit, information: information)
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        var nds = try base ?? TestNDS()
        nds.settings.nwc.relays = NostrRelayProvider.Configuration(allowPrivateRelays: true, extraTrustRootsPEMFile: caFile)
        nds.settings.registrationsPerMinute = 1000
        let ready = nds
        try await first.withRunning { one in
            try await second.withRunning { two in
                try await body(ready, [(first, one.relayURL), (second, two.relayURL)])
            }
        }
    }

    /// `nds` (on the two look-alike relays) with a wallet whose NWC webhook is another server on
    /// loopback, registered on the first relay and subscribed. `answer` gives the status of each
    /// POST from its body; `body` gets the client, the wallet and the relay to publish on.
    static func withForeignWebhook(
        _ base: TestNDS, answer: @escaping @Sendable (String) async -> HTTPResponse.Status,
        _ body: @Sendable (_ client: any TestClientProtocol, _ wallet: Wallet, _ relay: MockNostrRelay) async throws -> Void
    ) async throws {
        try await withRelays(from: base) { nds, relays in
            let receiver = Router()
            receiver.post("hook") { request, _ -> Response in
                Response(status: await answer(String(buffer: try await request.body.collect(upTo: 65_536))))
            }
            var configured = nds
            configured.settings.webPush = WebPushPolicy(allowInsecureEndpoints: true, allowPrivateEndpoints: true)
            let ready = configured
            let http = try PushHTTPClient(configuration: .init(allowPrivateWebPushEndpoints: true))
            let providers = ready.localRouter().forwarding(to: WebhookForwardProvider(httpClient: http, policy: ready.settings.webPush))
            let wallet = Wallet()
            try await Application(router: receiver, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { hook in
                let url = "http://127.0.0.1:\(hook.port ?? 0)/hook"
                try await ready.app(providers: providers).test(.live) { client in
                    let registered = try await client.post(
                        "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: url, relays: [relays[0].1]))
                    #expect(registered.status == .ok, "\(registered.text)")
                    _ = try await relays[0].0.subscriptions.waitFor(count: 1)
                    try await body(client, wallet, relays[0].0)
                }
            }
            await http.shutdown()
        }
    }

    /// `count` wallets, each with a registered Android device of its own.
    static func devices(_ count: Int, in nds: TestNDS, prefix: String) async throws -> ([Wallet], [Device]) {
        var devices: [Device] = []
        for index in 0..<count {
            devices.append(try await nds.store.registerDevice(platform: .android, token: "\(prefix)\(index)", now: Date()).device)
        }
        return ((0..<count).map { _ in Wallet() }, devices)
    }

    /// Registers each wallet's NWC forwarding to its device's webhook on `relays`.
    static func register(_ wallets: [Wallet], _ devices: [Device], relays: [String], client: some TestClientProtocol) async throws {
        for (wallet, device) in zip(wallets, devices) {
            let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
            let answer = try await client.post("/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: relays))
            #expect(answer.status == .ok, "\(answer.text)")
        }
    }

    static func pushes(_ nds: TestNDS, _ device: Device) async throws -> [[String: String]] {
        try await nds.store.localPushes(platform: device.platform, token: device.token, after: 0, limit: 100).compactMap {
            (try? JSONSerialization.jsonObject(with: $0.payload)) as? [String: String]
        }
    }

    static func event(in push: [String: String]) -> String? {
        guard let payload = push["notification_payload"],
            let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: String]
        else { return nil }
        return object["event"]
    }

    @Test("register with a signed body; a request published to both relays is one nwc_event push, its raw event intact; refusals are not pushed")
    func forwardOnce() async throws {
        try await Self.withRelays { nds, relays in
            let device = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-wallet", now: Date()).device
            let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
            let wallet = Wallet()
            try await nds.app().test(.live) { client in
                let registered = try await client.post(
                    "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: relays.map(\.1)))
                #expect(registered.status == .ok, "\(registered.text)")
                #expect(registered.text == "Pubkey registered successfully")
                for (relay, _) in relays {
                    let req = try #require(try await relay.subscriptions.waitFor(count: 1).first)
                    let frame = try #require(try JSONSerialization.jsonObject(with: req) as? [Any])
                    let filter = try #require(frame.last as? [String: Any])
                    #expect(filter["kinds"] as? [Int] == [NwcKind.request])
                    #expect(filter["#p"] as? [String] == [wallet.service.publicKeyHex])
                    #expect(filter["since"] is Int)
                }

                // Refused, in order: a stranger's request, an expired one, a forged id.
                let stranger = try wallet.request("get_balance", author: NostrSecretKey.generate().key)
                let expired = try wallet.request("get_info", tags: [["expiration", String(Int(Date().timeIntervalSince1970) - 10)]])
                var forged = try wallet.request("get_info")
                forged.content = try wallet.request("pay_invoice").content
                for event in [stranger, expired, forged] { await relays[0].0.publish(Data(event.json.utf8)) }

                // The real one, on both relays: one push.
                let request = try wallet.request("get_balance")
                for (relay, _) in relays { await relay.publish(Data(request.json.utf8)) }
                // A second real one afterwards: when it has arrived, a duplicate of the first would have too.
                let second = try wallet.request("get_info")
                await relays[1].0.publish(Data(second.json.utf8))

                #expect(try await eventually { try await Self.pushes(nds, device).count >= 2 })
                let pushes = try await Self.pushes(nds, device)
                #expect(pushes.count == 2)
                #expect(pushes.allSatisfy { $0["notification_type"] == "nwc_event" })
                // Two relays, two connections: the order between them is not fixed.
                #expect(Set(pushes.compactMap(Self.event)) == [request.json, second.json])
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(
                    metrics.contains(#"herald_nwc_events_total{outcome="forwarded"} 2"#),
                    "\(metrics.split(separator: "\n").filter { $0.contains("nwc") })")
                #expect(metrics.contains(#"herald_nwc_events_total{outcome="deduplicated"} 1"#))
                #expect(metrics.contains(#"herald_nwc_events_refused_total{reason="unknown_app"} 1"#))
                #expect(metrics.contains(#"herald_nwc_events_refused_total{reason="expired"} 1"#))
                #expect(metrics.contains(#"herald_nwc_events_refused_total{reason="invalid_signature"} 1"#))
                #expect(metrics.contains("herald_nwc_relays 2"))
                #expect(metrics.contains(#"herald_nwc_subscriptions{relay="\#(relays[0].1)"} 1"#))
                // The dashboard shows the same.
                let admin = try await nds.apiKey([.admin])
                let session = try #require(try await DashboardTests.login(client, key: admin))
                let page = try await client.execute(uri: "/admin", method: .get, headers: [.cookie: session.cookie]).text
                #expect(page.contains(#"<tr><td>NWC requests</td><td id="nwc-forwarded">2</td><td>1</td><td>3</td></tr>"#))
                #expect(page.contains(#"<tr><td>NWC relays</td><td colspan="3">2 "#))

                // Unregistered: the subscriptions close.
                let removed = try await client.execute(
                    uri: "/nwc/\(wallet.node.nodeID.hex)", method: .delete,
                    headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: wallet.unregistration(time: Int64(Date().timeIntervalSince1970))))
                #expect(removed.status == .ok && removed.text == "Pubkey unregistered successfully")
                #expect(
                    await eventually { () async -> Bool in
                        let first = await relays[0].0.openSubscriptions()
                        let second = await relays[1].0.openSubscriptions()
                        return first == 0 && second == 0
                    })
            }
        }
    }

    @Test(
        "a relay's NIP-11 limits are kept: 40 wallets in REQs under its longest message, no more subscriptions a connection than it holds, none refused"
    )
    func relayInformation() async throws {
        let information = #"{"name":"small","software":"look-alike","limitation":{"max_subscriptions":2,"max_message_length":1000}}"#
        try await Self.withRelays(subscriptionLimit: 2, information: information) { nds, relays in
            let (wallets, devices) = try await Self.devices(40, in: nds, prefix: "fcm-nwc-nip11-")
            try await nds.app().test(.live) { client in
                try await Self.register(wallets, devices, relays: relays.map(\.1), client: client)
                let everyKey = Set(wallets.map(\.service.publicKeyHex))
                for (relay, _) in relays {
                    #expect(
                        try await eventually {
                            let open = await relay.openSubscriptions()
                            let frames = await relay.subscriptions.all.suffix(open)
                            let keys = frames.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [Any] }
                                .flatMap { ($0.last as? [String: Any])?["#p"] as? [String] ?? [] }
                            return Set(keys) == everyKey
                        })
                    let open = await relay.openSubscriptions()
                    for frame in await relay.subscriptions.all.suffix(open) { #expect(frame.count <= 1000, "a REQ of \(frame.count) bytes") }
                }
                for wallet in wallets {
                    let request = try wallet.request("get_balance")
                    for (relay, _) in relays { await relay.publish(Data(request.json.utf8)) }
                }
                for device in devices {
                    #expect(try await eventually { try await Self.pushes(nds, device).count >= 1 }, "\(device.token)")
                }
                for device in devices { #expect(try await Self.pushes(nds, device).count == 1) }
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(!metrics.contains("herald_nwc_subscriptions_refused_total"))
            }
        }
    }

    @Test("40 wallets on relays that hold 32 subscriptions a connection: every request to each wakes its phone once")
    func manyWallets() async throws {
        try await Self.withRelays(subscriptionLimit: 32) { nds, relays in
            let (wallets, devices) = try await Self.devices(40, in: nds, prefix: "fcm-nwc-many-")
            try await nds.app().test(.live) { client in
                try await Self.register(wallets, devices, relays: relays.map(\.1), client: client)
                // Subscribed to all 40 on each relay, in filters of many keys.
                #expect(
                    try await eventually {
                        let frames = await relays[0].0.subscriptions.all
                        let keys = frames.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [Any] }
                            .compactMap { ($0.last as? [String: Any])?["#p"] as? [String] }
                        return Set(keys.last ?? []).count == 40
                    })
                for wallet in wallets {
                    let request = try wallet.request("get_balance")
                    for (relay, _) in relays { await relay.publish(Data(request.json.utf8)) }
                }
                for device in devices {
                    #expect(try await eventually { try await Self.pushes(nds, device).count >= 1 }, "\(device.token)")
                }
                // A last request for each: when it is there, a duplicate of the first would be too.
                for wallet in wallets { await relays[1].0.publish(Data(try wallet.request("get_info").json.utf8)) }
                for device in devices {
                    #expect(try await eventually { try await Self.pushes(nds, device).count >= 2 })
                    #expect(try await Self.pushes(nds, device).count == 2, "\(device.token)")
                }
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(!metrics.contains("herald_nwc_subscriptions_refused_total"))
            }
        }
    }

    @Test("a request dated ten years ahead is refused (future_event) and moves no cursor: the next real request still wakes the phone")
    func futureEvent() async throws {
        try await Self.withRelays { nds, relays in
            let device = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-future", now: Date()).device
            let wallet = Wallet()
            try await nds.app().test(.live) { client in
                let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
                let registered = try await client.post(
                    "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [relays[0].1]))
                #expect(registered.status == .ok)
                _ = try await relays[0].0.subscriptions.waitFor(count: 1)
                let future = try wallet.request("get_balance", createdAt: Int64(Date().timeIntervalSince1970) + 10 * 365 * 86_400)
                await relays[0].0.publish(Data(future.json.utf8))
                let real = try wallet.request("get_info")
                await relays[0].0.publish(Data(real.json.utf8))
                #expect(try await eventually { try await Self.pushes(nds, device).count >= 1 })
                #expect(try await Self.pushes(nds, device).compactMap(Self.event) == [real.json])
                let metrics = try await client.execute(uri: "/metrics", method: .get).text
                #expect(metrics.contains(#"herald_nwc_events_refused_total{reason="future_event"} 1"#))
                let cursor = try #require(try await nds.store.nwcCursors()[wallet.service.publicKeyHex])
                #expect(abs(Double(cursor) - Date().timeIntervalSince1970) < 60)
            }
        }
    }

    /// This process's resident memory, in MB.
    static func residentMB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test("a relay sending 300 MB of junk as fast as it can: read as fast as it is handled, memory stays flat")
    func flood() async throws {
        let certificate = try TestCertificate.make()
        let relay = MockNostrRelay(certificate: certificate, floodBytes: 300 << 20)
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        var nds = try TestNDS()
        nds.settings.nwc.relays = NostrRelayProvider.Configuration(allowPrivateRelays: true, extraTrustRootsPEMFile: caFile)
        let device = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-flood", now: Date()).device
        let wallet = Wallet()
        let ready = nds
        try await relay.withRunning { running in
            try await ready.app().test(.live) { client in
                let before = Self.residentMB()
                let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
                let registered = try await client.post(
                    "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [running.relayURL]))
                #expect(registered.status == .ok)
                var peak = before
                // 300 MB at the pace Herald reads them: sample memory while the flood lasts.
                let started = ContinuousClock.now
                while ContinuousClock.now - started < .seconds(20) {
                    try await Task.sleep(for: .milliseconds(250))
                    peak = max(peak, Self.residentMB())
                    let metrics = try await client.execute(uri: "/metrics", method: .get).text
                    if metrics.contains(#"herald_nwc_events_refused_total{reason="unreadable"} 2000"#) { break }
                }
                let refused = try await client.execute(uri: "/metrics", method: .get).text.split(separator: "\n")
                    .first { $0.hasPrefix(#"herald_nwc_events_refused_total{reason="unreadable"}"#) }
                print("nwc flood: RSS \(before) MB before, \(peak) MB at most; \(refused ?? "none refused")")
                #expect(refused != nil, "the relay's events were not read")
                #expect(peak - before < 100, "RSS grew from \(before) to \(peak) MB under a flooding relay")
            }
        }
    }

    @Test("relays are compared in one spelling; past the relays per host, in all, or per node key a registration is 400 too_many_relays")
    func relayBudget() async throws {
        try await Self.withRelays { nds, relays in
            var nds = nds
            nds.settings.nwc.maxRelaysPerHost = 2
            nds.settings.nwc.maxRelays = 3
            let device = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-budget", now: Date()).device
            let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
            let base = relays[0].1  // wss://localhost:PORT
            let upper = base.replacingOccurrences(of: "localhost", with: "LOCALHOST")
            let ready = nds
            try await ready.app().test(.live) { client in
                // Five spellings of one relay: one relay, one subscription.
                let wallet = Wallet()
                let spellings = [base, base + "/", upper, upper + "/#top", base.replacingOccurrences(of: "wss://", with: "wss://user@")]
                let first = try await client.post("/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: spellings))
                #expect(first.status == .ok, "\(first.text)")
                #expect(try await ready.store.nwcRegistrations().first?.relays == [base])
                // Two paths on the host are two relays; a third is one too many on that host.
                let second = Wallet()
                let paths = try await client.post(
                    "/nwc/\(second.node.nodeID.hex)", json: second.registration(webhook: webhook, relays: [base + "/a", base + "/b"]))
                #expect(paths.status == .badRequest && paths.json["error"] as? String == "too_many_relays", "\(paths.text)")
                let one = try await client.post("/nwc/\(second.node.nodeID.hex)", json: second.registration(webhook: webhook, relays: [base + "/a"]))
                #expect(one.status == .ok)
                // The server's total: the other relay's host has room, but three relays are watched already.
                let third = Wallet()
                let total = try await client.post(
                    "/nwc/\(third.node.nodeID.hex)", json: third.registration(webhook: webhook, relays: [relays[1].1, relays[1].1 + "/x"]))
                #expect(total.status == .badRequest && total.json["error"] as? String == "too_many_relays", "\(total.text)")
                // Relays already watched cost nothing.
                let reuse = try await client.post(
                    "/nwc/\(third.node.nodeID.hex)", json: third.registration(webhook: webhook, relays: [upper, base + "/a/"]))
                #expect(reuse.status == .ok, "\(reuse.text)")
            }
        }
    }

    @Test(
        "a stranger who registers a wallet's keys first neither blocks nor replaces the wallet's registration; each webhook gets its own copy, and the stranger leaving changes nothing for the wallet"
    )
    func noSquatting() async throws {
        try await Self.withRelays { nds, relays in
            let phone = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-owner", now: Date()).device
            let squatter = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-squatter", now: Date()).device
            let wallet = Wallet()
            let stranger = NodeSecretKey.random()
            try await nds.app().test(.live) { client in
                let theirs = "http://nds.test/api/v1/notify?platform=android&token=\(squatter.alias)"
                let first = try await client.post(
                    "/nwc/\(stranger.nodeID.hex)", json: wallet.registration(webhook: theirs, relays: [relays[0].1], signer: stranger))
                #expect(first.status == .ok)
                let mine = "http://nds.test/api/v1/notify?platform=android&token=\(phone.alias)"
                let own = try await client.post("/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: mine, relays: [relays[0].1]))
                #expect(own.status == .ok, "\(own.text)")
                let request = try wallet.request("get_balance")
                await relays[0].0.publish(Data(request.json.utf8))
                #expect(
                    try await eventually {
                        let mine = try await Self.pushes(nds, phone).count
                        let theirs = try await Self.pushes(nds, squatter).count
                        return mine == 1 && theirs == 1
                    })
                // The stranger leaves; it cannot remove the wallet's own.
                let signature = LightningMessageSignature.sign(
                    "\(Int64(Date().timeIntervalSince1970))-\(wallet.service.publicKeyHex)-\(wallet.app.publicKeyHex)", with: stranger)
                let leave = try await client.execute(
                    uri: "/nwc/\(stranger.nodeID.hex)", method: .delete, headers: [.contentType: "application/json"],
                    body: ByteBuffer(
                        string:
                            #"{"time":\#(Int64(Date().timeIntervalSince1970)),"walletServicePubkey":"\#(wallet.service.publicKeyHex)","appPubkey":"\#(wallet.app.publicKeyHex)","signature":"\#(signature)"}"#
                    ))
                #expect(leave.status == .ok)
                #expect(try await nds.store.nwcRegistrations().map(\.ownerPubkey) == [wallet.node.nodeID.hex])
                let second = try wallet.request("get_info")
                await relays[0].0.publish(Data(second.json.utf8))
                #expect(try await eventually { try await Self.pushes(nds, phone).count == 2 })
                #expect(try await Self.pushes(nds, squatter).count == 1)
            }
        }
    }

    @Test("filters name up to 256 wallet keys and a connection holds up to 10; each refusal halves the subscriptions, then the keys")
    func layout() throws {
        let wallets = (0..<3_000).map { (key: String(format: "%064x", $0), since: Int64(1_000 + $0)) }
        var layout = NwcWatcher.RelayLayout()
        let connections = layout.connections(wallets)
        #expect(connections.map(\.count) == [10, 2])
        let first = try #require(JSONSerialization.jsonObject(with: Data(connections[0][0].filter.utf8)) as? [String: Any])
        #expect((first["#p"] as? [String])?.count == 256)
        #expect(first["since"] as? Int == 1_000)
        #expect(first["kinds"] as? [Int] == [NwcKind.request])
        #expect(Set(connections.flatMap { $0.map(\.id) }).count == 12)
        layout.shrink()
        #expect(layout.connections(wallets).map(\.count) == [5, 5, 2])
        for _ in 0..<2 { layout.shrink() }
        #expect(layout.maxSubscriptions == 1 && layout.keysPerFilter == 256)
        layout.shrink()
        #expect(layout.keysPerFilter == 128 && layout.connections(wallets).count == 24)
        #expect(NostrRelaySubscriber.refusesSubscriptions("rejected: too many subscriptions"))
        #expect(NostrRelaySubscriber.refusesSubscriptions("ERROR: max subscriptions reached"))
        #expect(!NostrRelaySubscriber.refusesSubscriptions("rate-limited: slow down"))
    }

    @Test("a NIP-11 document is read for its limitation; the layout keeps within it and within the defaults")
    func layoutFromInformation() throws {
        let document = #"""
            {"name":"r","supported_nips":[1,11],"limitation":{"max_subscriptions":4,"max_filters":10,"max_message_length":16384,"auth_required":false}}
            """#
        let information = try WireJSON.decode(RelayInformation.self, from: Data(document.utf8))
        #expect(information.limitation == RelayInformation.Limitation(maxSubscriptions: 4, maxFilters: 10, maxMessageLength: 16384))
        let layout = NwcWatcher.RelayLayout(information)
        #expect(layout.maxSubscriptions == 4 && layout.keysPerFilter == (16384 - 128) / 67)
        let wallets = (0..<1_000).map { (key: String(format: "%064x", $0), since: Int64(1_700_000_000)) }
        for connection in layout.connections(wallets) {
            #expect(connection.count <= 4)
            for subscription in connection {
                #expect((#"["REQ","\#(subscription.id)",\#(subscription.filter)]"#).utf8.count <= 16384)
            }
        }
        // Generous limits do not raise the defaults; a relay without limits keeps them.
        let generous = RelayInformation(limitation: .init(maxSubscriptions: 500, maxMessageLength: 1 << 20))
        #expect(NwcWatcher.RelayLayout(generous) == NwcWatcher.RelayLayout())
        #expect(NwcWatcher.RelayLayout(RelayInformation(name: "plain")) == NwcWatcher.RelayLayout())
    }

    @Test(
        "refused registrations: a bad signature, another key's path, a stale unregistration, bad keys and relays, another server's webhook, a private relay"
    )
    func refusals() async throws {
        try await Self.withRelays { nds, relays in
            let device = try await nds.store.registerDevice(platform: .android, token: "fcm-nwc-refusals", now: Date()).device
            let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
            let wallet = Wallet()
            try await nds.app().test(.live) { client in
                func expect(
                    _ path: String, _ json: String, _ status: HTTPResponse.Status, _ code: String, sourceLocation: SourceLocation = #_sourceLocation
                ) async throws {
                    let response = try await client.post(path, json: json)
                    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
                    #expect(response.json["error"] as? String == code, sourceLocation: sourceLocation)
                }
                let path = "/nwc/\(wallet.node.nodeID.hex)"
                try await expect(
                    path, wallet.registration(webhook: webhook, relays: [relays[0].1], signer: NodeSecretKey.random()), .unauthorized,
                    "invalid_signature")
                try await expect(
                    "/nwc/\(NodeSecretKey.random().nodeID.hex)", wallet.registration(webhook: webhook, relays: [relays[0].1]), .unauthorized,
                    "invalid_signature")
                try await expect(path, wallet.registration(webhook: webhook, relays: ["ws://plain.example"]), .badRequest, "invalid_relays")
                try await expect(
                    path, wallet.registration(webhook: webhook, relays: (0..<11).map { "wss://r\($0).example" }), .badRequest, "invalid_relays")
                try await expect(
                    path, wallet.registration(webhook: "http://elsewhere.example/hook", relays: [relays[0].1]), .badRequest, "invalid_webhook_url")
                try await expect(
                    path, wallet.registration(webhook: "https://127.0.0.1/hook", relays: [relays[0].1]), .badRequest, "private_webhook_url")
                try await expect("/nwc/not-a-key", wallet.registration(webhook: webhook, relays: [relays[0].1]), .badRequest, "invalid_pubkey")
                try await expect(path, "{", .badRequest, "invalid_json")
                #expect(try await client.post(path, json: wallet.registration(webhook: webhook, relays: [relays[0].1])).status == .ok)
                let stale = try await client.execute(
                    uri: path, method: .delete, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: wallet.unregistration(time: Int64(Date().timeIntervalSince1970) - 300)))
                #expect(stale.status == .unauthorized && stale.json["error"] as? String == "stale_time")
            }
            // Without nostr.allow_private_relays, a relay on loopback is refused.
            var loosened = nds
            loosened.settings.nwc.relays.allowPrivateRelays = false
            let strict = loosened
            try await strict.app().test(.live) { client in
                let response = try await client.post(
                    "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [relays[0].1]))
                #expect(response.status == .badRequest && response.json["error"] as? String == "private_relay", "\(response.text)")
            }
        }
    }

    /// An NDS reaching one relay (not started), a device and its webhook URL.
    static func withOneRelay(
        token: String, _ body: (_ nds: TestNDS, _ relay: MockNostrRelay, _ device: Device, _ webhook: String) async throws -> Void
    ) async throws {
        let certificate = try TestCertificate.make()
        let caFile = try certificate.writeCAToTemporaryFile()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        var made = try TestNDS()
        made.settings.nwc.relays = NostrRelayProvider.Configuration(allowPrivateRelays: true, extraTrustRootsPEMFile: caFile)
        let device = try await made.store.registerDevice(platform: .android, token: token, now: Date()).device
        try await body(made, MockNostrRelay(certificate: certificate), device, "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)")
    }

    @Test("a relay that restarts is subscribed again from the last event forwarded, and an old request is not pushed twice")
    func relayRestart() async throws {
        try await Self.withOneRelay(token: "fcm-nwc-restart") { nds, relay, device, webhook in
            let wallet = Wallet()
            let first = try await relay.start()
            let port = first.port
            try await nds.app().test(.live) { client in
                #expect(
                    try await client.post("/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [first.relayURL]))
                        .status == .ok)
                _ = try await relay.subscriptions.waitFor(count: 1)
                let old = try wallet.request("get_balance")
                await relay.publish(Data(old.json.utf8))
                #expect(try await eventually { try await Self.pushes(nds, device).count == 1 })

                // The relay goes away and comes back on the same port, still holding the old request.
                await first.stop()
                let again = try await relay.start(port: port)
                _ = try await relay.subscriptions.waitFor(count: 2, timeout: .seconds(20))
                let req = try #require(try JSONSerialization.jsonObject(with: await relay.subscriptions.all[1]) as? [Any])
                let since = try #require((req.last as? [String: Any])?["since"] as? Int)
                #expect(Int64(since) >= old.createdAt - 120 && Int64(since) <= old.createdAt)
                let fresh = try wallet.request("get_info")
                await relay.publish(Data(fresh.json.utf8))
                #expect(try await eventually { try await Self.pushes(nds, device).count >= 2 })
                #expect(try await Self.pushes(nds, device).compactMap(Self.event) == [old.json, fresh.json])
                await again.stop()
            }
        }
    }

    @Test("Herald restarts: a request published while it was down is pushed once after, an old one not again")
    func heraldRestart() async throws {
        try await Self.withOneRelay(token: "fcm-nwc-herald-restart") { nds, relay, device, webhook in
            let wallet = Wallet()
            try await relay.withRunning { running in
                let old = try wallet.request("get_balance")
                try await nds.app().test(.live) { client in
                    #expect(
                        try await client.post(
                            "/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [running.relayURL])
                        ).status == .ok)
                    _ = try await relay.subscriptions.waitFor(count: 1)
                    await relay.publish(Data(old.json.utf8))
                    #expect(try await eventually { try await Self.pushes(nds, device).count == 1 })
                }
                // Down: a request arrives at the relay meanwhile.
                let missed = try wallet.request("get_info")
                await relay.publish(Data(missed.json.utf8))
                try await nds.app().test(.live) { _ in
                    _ = try await relay.subscriptions.waitFor(count: 2, timeout: .seconds(20))
                    #expect(try await eventually { try await Self.pushes(nds, device).count >= 2 })
                    #expect(try await Self.pushes(nds, device).compactMap(Self.event) == [old.json, missed.json])
                }
            }
        }
    }

    @Test(
        "300 requests for a wallet whose webhook is another server: its burst at once, the rest paced at its allowance; those whose slot is past their expiration are dropped and counted"
    )
    func foreignWebhookAllowance() async throws {
        actor Received {
            var times: [ContinuousClock.Instant] = []
            func add() { times.append(.now) }
        }
        let received = Received()
        var configured = try TestNDS()
        configured.settings.targetPushBurst = 20
        configured.settings.targetPushesPerMinute = 600
        try await Self.withForeignWebhook(configured) { _ in
            await received.add()
            return .ok
        } _: { client, wallet, relay in
            // Each request expires 4 s from now: 20 at once and 10 a second fit before that, not 300.
            let expiration = Int64(Date().timeIntervalSince1970) + 4
            for _ in 0..<300 {
                let request = try wallet.request("get_balance", tags: [["expiration", "\(expiration)"]])
                await relay.publish(Data(request.json.utf8))
            }
            let metrics = { try await client.execute(uri: "/metrics", method: .get).text }
            func count(_ name: String) async throws -> Int {
                let line = try await metrics().split(separator: "\n").first { $0.hasPrefix(name + " ") }
                return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            }
            let forwarded = #"herald_nwc_events_total{outcome="forwarded"}"#
            let dropped = #"herald_nwc_events_refused_total{reason="webhook_rate_limited"}"#
            // On a busy machine some arrive after their expiration: refused as expired, not sent either.
            let expired = #"herald_nwc_events_refused_total{reason="expired"}"#
            #expect(try await eventually { try await count(forwarded) + count(dropped) + count(expired) == 300 })
            let sent = try await count(forwarded)
            #expect(try await count(dropped) > 0)
            // Past the burst most wait for a slot; a few find one refilled as they arrive.
            let paced = try await count(#"herald_nwc_events_total{outcome="paced"}"#)
            #expect(paced > 0 && paced <= sent - 20, "\(paced) of \(sent) paced")
            #expect((20...20 + 10 * 5).contains(sent), "\(sent) forwarded")
            #expect(await eventually(timeout: .seconds(15)) { await received.times.count == sent })
            // Paced, not at once: the last POST came no sooner than its slot in the bucket.
            let times = await received.times
            if let first = times.first, let last = times.last, sent > 30 {
                #expect(last - first >= .milliseconds(Int64((sent - 20 - 10) * 100)), "\(sent) POSTs in \(last - first)")
            }
        }
    }

    @Test("another service's webhook gets breez-lnurl's body by POST through the outbox: retried after a 503, once")
    func forwardToAnotherService() async throws {
        actor Received {
            var bodies: [String] = []
            func add(_ body: String) -> Int {
                bodies.append(body)
                return bodies.count
            }
        }
        let received = Received()
        var configured = try TestNDS()
        configured.dispatcher.backoff = Backoff(base: .milliseconds(50), cap: .milliseconds(100))
        // The first attempt fails as a service that is down would.
        try await Self.withForeignWebhook(configured) { body in
            await received.add(body) == 1 ? .serviceUnavailable : .ok
        } _: { _, wallet, relay in
            let request = try wallet.request("get_balance")
            await relay.publish(Data(request.json.utf8))
            #expect(await eventually { await received.bodies.count >= 2 })
            let bodies = await received.bodies
            #expect(bodies.count == 2)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(bodies[1].utf8)) as? [String: Any])
            #expect(body["template"] as? String == "nwc_event")
            #expect((body["data"] as? [String: String])?["event"] == request.json)
            #expect(bodies[0] == bodies[1])
        }
    }

    @Test("1,000 requests from the relay to the APNs look-alike, one at a time: each arrives once; p50 and p99 printed")
    func latency() async throws {
        try await Self.withRelays { base, relays in
            var nds = base
            nds.settings.targetPushesPerMinute = 1_000_000
            nds.settings.targetPushBurst = 1_000_000
            let ready = nds
            let token = String(repeating: "6e", count: 32)
            let device = try await ready.store.registerDevice(platform: .ios, token: token, now: Date()).device
            let webhook = "http://nds.test/api/v1/notify?platform=ios&token=\(device.alias)"
            let wallet = Wallet()
            try await ready.withMockPush { servers, providers in
                try await ready.app(providers: providers).test(.live) { client in
                    #expect(
                        try await client.post("/nwc/\(wallet.node.nodeID.hex)", json: wallet.registration(webhook: webhook, relays: [relays[0].1]))
                            .status == .ok)
                    _ = try await relays[0].0.subscriptions.waitFor(count: 1)
                    var took: [Duration] = []
                    for index in 0..<1000 {
                        let request = try wallet.request(index.isMultiple(of: 2) ? "get_balance" : "get_info")
                        let started = ContinuousClock.now
                        await relays[0].0.publish(Data(request.json.utf8))
                        let arrived = try await servers.apns.requests.waitFor(count: index + 1)
                        took.append(ContinuousClock.now - started)
                        #expect(String(decoding: arrived[index].body, as: UTF8.self).contains(request.id))
                    }
                    let sorted = took.sorted()
                    print("nwc latency relay event -> APNs look-alike over 1000: p50 \(sorted[499]), p99 \(sorted[989]), max \(sorted[999])")
                    #expect(try await servers.apns.requests.waitFor(count: 1000).count == 1000)
                }
            }
        }
    }

    @Test("thirty registrations by one key at once: exactly the key's limit is stored, the rest 429, none lost or doubled")
    func concurrentRegistrations() async throws {
        try await Self.withRelays { base, relays in
            var nds = base
            nds.settings.nwc.registrationsPerKey = 10
            let ready = nds
            let device = try await ready.store.registerDevice(platform: .android, token: "fcm-nwc-concurrent", now: Date()).device
            let webhook = "http://nds.test/api/v1/notify?platform=android&token=\(device.alias)"
            let node = NodeSecretKey.random()
            let bodies = (0..<30).map { _ in
                let wallet = Wallet()
                let message = "\(webhook)-\(wallet.service.publicKeyHex)-\(wallet.app.publicKeyHex)-[\(relays[0].1)]"
                return
                    #"{"webhookUrl":"\#(webhook)","walletServicePubkey":"\#(wallet.service.publicKeyHex)","appPubkey":"\#(wallet.app.publicKeyHex)","relays":["\#(relays[0].1)"],"signature":"\#(LightningMessageSignature.sign(message, with: node))"}"#
            }
            try await ready.app().test(.live) { client in
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for body in bodies { group.addTask { try await client.post("/nwc/\(node.nodeID.hex)", json: body).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 10)
                #expect(statuses.filter { $0 == .tooManyRequests }.count == 20)
                #expect(try await ready.store.nwcRegistrations().count == 10)
            }
        }
    }
}
