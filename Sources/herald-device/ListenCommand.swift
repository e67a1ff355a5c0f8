import Crypto
import Foundation
import HeraldDevice
import HeraldWire

/// `herald-device listen --server URL`: registers with a running NDS, long-polls the local
/// provider's push feed and handles each push like a phone would, printing one JSON line each.
enum ListenCommand {
    /// Pushes handled at once.
    static let concurrentPushes = 4

    static func run(_ arguments: Arguments) async throws -> Int32 {
        guard let serverText = arguments.option("server"), let server = URL(string: serverText) else {
            throw UsageError("listen needs --server URL")
        }
        let platformText = arguments.option("platform") ?? "ios"
        guard let platform = Platform(rawValue: platformText) else { throw UsageError("--platform is ios, android or webpush") }
        let maxPushes = try arguments.integer("max-pushes")
        if arguments.flags.contains("wake-gateway") {
            return try await WakeGatewayListen.run(arguments, server: server, platform: platform, maxPushes: maxPushes)
        }
        let environment = try DeviceEnvironment(arguments)
        try environment.makeFolders()
        // A server in `registration: key` registers only callers with a `devices` key.
        let client = DevelopmentServerClient(
            server: server, apiKey: arguments.option("api-key") ?? ProcessInfo.processInfo.environment["HERALD_API_KEY"])

        let registration = try await register(
            client, platform: platform, token: arguments.option("token"), folder: environment.walletFolder, fresh: arguments.option("token") != nil)
        let secret = registration.deviceSecret
        let plugin = try environment.plugin(wakeAcks: WakeAckTarget(server: server, deviceID: registration.deviceID, secret: { secret }))
        printJSON(
            RegisteredLine(
                deviceID: registration.deviceID, webhookURL: registration.webhookURL, alias: registration.alias,
                platform: registration.platform, pushToken: registration.pushToken))

        // Pushes are handled side by side, a few at a time, as a phone runs an extension per
        // push: a swap the wallet does not know holds up nothing behind it.
        // Where the last run stopped: a push taken up once is not taken up again after a restart,
        // as an extension is not handed a push twice (one cut off by the stop is not retried).
        // Kept with the device it is for: a new registration starts its own feed.
        let cursorFile = environment.walletFolder.appendingPathComponent("feed-cursor")
        let saved = (try? String(contentsOf: cursorFile, encoding: .utf8))?.split(separator: " ")
        let startAfter = saved.flatMap { $0.count == 2 && $0[0] == registration.deviceID ? Int64($0[1]) : nil }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var after: Int64 = startAfter ?? 0
            var handled = 0
            var running = 0
            while maxPushes.map({ handled < $0 }) ?? true {
                let feed: LocalPushFeed
                do {
                    feed = try await client.pushes(for: registration, after: after, wait: 25)
                } catch {
                    FileHandle.standardError.write(Data("push feed: \(error); retrying\n".utf8))
                    try await Task.sleep(for: .seconds(1))
                    continue
                }
                for push in feed.pushes where push.seq > after {
                    if running >= Self.concurrentPushes {
                        try await group.next()
                        running -= 1
                    }
                    let userInfo = push.payload.objectValue ?? [:]
                    // Said at once, on standard error (standard output keeps one JSON line per
                    // result): a push can take the whole budget, and silence reads as a hang.
                    FileHandle.standardError.write(Data(Self.taking(userInfo, seq: push.seq, budget: environment.budget).utf8))
                    group.addTask {
                        let result = await plugin.handle(plugin.decode(userInfo: userInfo))
                        printJSON(HandleOutput(result))
                    }
                    running += 1
                    after = push.seq
                    handled += 1
                    try Data("\(registration.deviceID) \(after)".utf8).write(to: cursorFile, options: .atomic)
                }
                after = max(after, feed.next)
            }
            try await group.waitForAll()
        }
        return 0
    }

    /// Reuses the registration kept in the wallet folder for this server, or registers anew.
    /// The line said as a push is taken up: its type, and why it may take a while.
    static func taking(_ userInfo: [String: JSONValue], seq: Int64, budget: Duration) -> String {
        let type = userInfo["notification_type"]?.stringValue ?? userInfo["type"]?.stringValue ?? "a push"
        let seconds = Int(budget.components.seconds)
        let why =
            switch NotificationType(rawValue: type) {
            case .swapUpdated: "a swap that is not final waits for its next status, up to \(seconds) s, then shows Payment Pending"
            case .nwcEvent: "the wallet answers the NWC request on its relays"
            case .lnurlpayInfo, .lnurlpayInvoice, .lnurlpayVerify, .invoiceRequest: "the wallet answers the caller through its reply URL"
            default: "up to \(seconds) s"
            }
        return "herald-device: handling \(type) (seq \(seq)): \(why)\n"
    }

    static func register(_ client: DevelopmentServerClient, platform: Platform, token: String?, folder: URL, fresh: Bool) async throws
        -> DeviceRegistration
    {
        let file = folder.appendingPathComponent("registration.json")
        let server = client.server.absoluteString
        if !fresh, let data = try? Data(contentsOf: file), let saved = try? WireJSON.decode(DeviceRegistration.self, from: data),
            saved.server == server
        {
            return saved
        }
        // A token of the platform's form, as a real phone's would be: hex for APNs.
        let made =
            platform == .ios
            ? (0..<32).map { _ in UInt8.random(in: .min ... .max) }.lowercaseHex
            : "herald-device-\(UUID().uuidString)"
        var registration: DeviceRegistration
        if platform == .webpush {
            // A subscription of the form a UnifiedPush connector makes; the local development
            // provider records the message's plaintext for the feed instead of sending it.
            let key = P256.KeyAgreement.PrivateKey()
            let subscription = WebPushSubscription(
                endpoint: "https://push.herald-device.invalid/up/\(UUID().uuidString)",
                keys: .init(
                    p256dh: key.publicKey.x963Representation.base64URLEncodedString,
                    auth: Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncodedString))
            registration = try await client.register(platform: platform, pushToken: nil, subscription: subscription)
        } else {
            registration = try await client.register(platform: platform, pushToken: token ?? made)
            registration.pushToken = token ?? made
        }
        registration.server = server
        registration.platform = platform.rawValue
        // It holds the device secret: owner-only, as the node key is.
        try OwnerOnlyFile.write(try WireJSON.encode(registration), to: file)
        return registration
    }
}

struct RegisteredLine: Encodable {
    var event = "registered"
    var deviceID: String
    var webhookURL: String
    var alias: String?
    var platform: String?
    var pushToken: String?
    enum CodingKeys: String, CodingKey {
        case event
        case deviceID = "device_id"
        case webhookURL = "webhook_url"
        case alias, platform
        case pushToken = "push_token"
    }
}

/// `herald-device lsp set <node id>`: the LSP whose LSPS5 notifications wake this phone, set on
/// the registration kept in the wallet folder.
enum LSPCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        let words = Array(arguments.positional.dropFirst())
        guard words.count == 2, words[0] == "set" else { throw UsageError("lsp takes set <node id>") }
        let environment = try DeviceEnvironment(arguments)
        let file = environment.walletFolder.appendingPathComponent("registration.json")
        guard let data = try? Data(contentsOf: file), let registration = try? WireJSON.decode(DeviceRegistration.self, from: data),
            let serverText = registration.server, let server = URL(string: serverText)
        else { throw UsageError("no registration in \(environment.walletFolder.path): run listen first") }
        let answer = try await DevelopmentServerClient(server: server).update(
            registration, DeviceTokenUpdate(pushToken: nil, lspNodeID: words[1]))
        printJSON(["device_id": answer.deviceID, "lsp_node_id": answer.lspNodeID ?? ""])
        return 0
    }
}
