import Foundation
import HeraldBolt11
import HeraldDevice
import HeraldSecp256k1
import HeraldWake
import HeraldWire

/// `herald-device listen --server URL --wake-gateway`: the phone as a bitkit-core app would be
/// with Herald as its wake gateway. It registers at `{server}/wake` with an `ln:` proof by the
/// development wallet's node key, reads the local provider's feed, opens each wake with its
/// encryption key, hands it to the plugin and acknowledges what became of it.
enum WakeGatewayListen {
    /// What the phone keeps between runs: its keys, its bearer secret, its install id.
    struct Saved: Codable {
        var server: String
        var installID: String
        var encryptionKey: String
        var secret: String
        var pushToken: String
        var deviceID: String?
    }

    static func run(_ arguments: Arguments, server: URL, platform: Platform, maxPushes: Int?) async throws -> Int32 {
        guard platform == .ios || platform == .android else { throw UsageError("--wake-gateway takes --platform ios or android") }
        let environment = try DeviceEnvironment(arguments)
        let plugin = try environment.plugin()
        let node = try NodeKeyFile.loadOrCreate(in: environment.walletFolder)
        let gateway = WakeGatewayClient(gateway: server.appendingPathComponent("wake"))
        var saved = try load(environment.walletFolder, server: server, platform: platform)
        guard let encryption = NodeSecretKey(hex: saved.encryptionKey) else { throw UsageError("the saved encryption key does not parse") }

        let info = try await gateway.info()
        let topics = (arguments.option("topics") ?? "blocktank.*").split(separator: ",").map(String.init)
        var request = WakeRegistrationRequest(
            app: arguments.option("app") ?? "bitkit", installID: saved.installID, platform: platform == .ios ? .apns : .fcm,
            environment: .production, pushToken: saved.pushToken, encryptionKey: encryption.nodeID.hex,
            secretSHA256: WakeDeviceSecret.sha256(saved.secret), identities: ["ln:" + node.nodeID.hex], topics: topics,
            ts: Int64(Date().timeIntervalSince1970))
        request.proofs = [
            WakeIdentityProof(
                identity: "ln:" + node.nodeID.hex, sig: LightningMessageSignature.sign(request.preimage(audience: info.audience), with: node))
        ]
        let answer = try await gateway.register(
            request, bearer: arguments.option("api-key") ?? ProcessInfo.processInfo.environment["HERALD_API_KEY"])
        saved.deviceID = answer.deviceID
        try OwnerOnlyFile.write(try WireJSON.encode(saved), to: environment.walletFolder.appendingPathComponent(fileName))
        printJSON(
            Line(
                event: "registered", deviceID: answer.deviceID, identities: answer.identities, topics: answer.topics,
                unknownTopics: answer.unknownTopics))

        let feedClient = DevelopmentServerClient(server: server)
        // The feed takes the gateway's bearer secret for a device registered there.
        let feedRegistration = DeviceRegistration(deviceID: answer.deviceID, deviceSecret: saved.secret, webhookURL: "")
        var after: Int64 = 0
        var handled = 0
        while maxPushes.map({ handled < $0 }) ?? true {
            let feed: LocalPushFeed
            do {
                feed = try await feedClient.pushes(for: feedRegistration, after: after, wait: 25)
            } catch {
                FileHandle.standardError.write(Data("push feed: \(error); retrying\n".utf8))
                try await Task.sleep(for: .seconds(1))
                continue
            }
            for push in feed.pushes where push.seq > after {
                after = push.seq
                handled += 1
                var writer = JSONWriter()
                writer.value(push.payload)
                await handle(writer.bytes, encryption: encryption, plugin: plugin, gateway: gateway, secret: saved.secret)
            }
            after = max(after, feed.next)
        }
        return 0
    }

    /// Opens one push, handles it and acknowledges it; prints a line for each step.
    static func handle(_ push: [UInt8], encryption: NodeSecretKey, plugin: DevicePlugin, gateway: WakeGatewayClient, secret: String) async {
        let envelope: WakeEnvelope
        do {
            envelope = try WakeEnvelope.open(push: push, with: encryption)
        } catch {
            printJSON(Line(event: "unreadable", error: "\(error)"))
            return
        }
        printJSON(
            Line(
                event: envelope.fallback ? "fallback" : "wake", wakeID: envelope.id, topic: envelope.topic, version: envelope.version,
                payload: envelope.payloadJSON))
        // A fallback alert is shown as it is; a legacy wake has nothing to acknowledge.
        guard !envelope.fallback else { return }
        let result = await plugin.handle(gatewayWakeTopic: envelope.topic, payloadJSON: envelope.payloadJSON)
        guard envelope.version == 1, let id = envelope.id else { return }
        let outcome = result?.wakeAckOutcome ?? .noHandler
        do {
            try await gateway.acknowledge(wakeID: id, outcome: outcome, secret: secret)
            printJSON(Line(event: "ack", wakeID: id, outcome: outcome.rawValue, title: result?.content.title))
        } catch {
            printJSON(Line(event: "ack_failed", wakeID: id, error: "\(error)"))
        }
    }

    static let fileName = "wake-gateway.json"

    /// The saved phone for this server and platform, or a new one.
    static func load(_ folder: URL, server: URL, platform: Platform) throws -> Saved {
        let file = folder.appendingPathComponent(fileName)
        if let data = try? Data(contentsOf: file), let saved = try? WireJSON.decode(Saved.self, from: data), saved.server == server.absoluteString {
            return saved
        }
        let token =
            platform == .ios
            ? (0..<32).map { _ in UInt8.random(in: .min ... .max) }.lowercaseHex
            : "herald-device-" + (0..<60).map { _ in UInt8.random(in: .min ... .max) }.lowercaseHex
        return Saved(
            server: server.absoluteString, installID: Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncodedString,
            encryptionKey: NodeSecretKey.random().secretHex, secret: WakeDeviceSecret.make(), pushToken: token)
    }

    struct Line: Encodable {
        var event: String
        var deviceID: String?
        var identities: [String]?
        var topics: [String]?
        var unknownTopics: [String]?
        var wakeID: String?
        var topic: String?
        var version: Int?
        var payload: String?
        var outcome: String?
        var title: String?
        var error: String?
        enum CodingKeys: String, CodingKey {
            case event
            case deviceID = "device_id"
            case identities, topics
            case unknownTopics = "unknown_topics"
            case wakeID = "wake_id"
            case topic, version, payload, outcome, title, error
        }
    }
}
