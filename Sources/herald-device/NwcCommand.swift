import Foundation
import HeraldBolt11
import HeraldDevelopmentInvoices
import HeraldDevice
import HeraldNostr
import HeraldPush
import HeraldSecp256k1
import HeraldWire
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The development wallet's NWC connection: the service key (kept in the wallet folder), the
/// app's key, the relays. `herald-device nwc connect` makes it and registers it with the NDS.
struct NwcConnection: Codable {
    var relays: [String]
    var appSecret: String
    var appPubkey: String

    static let fileName = "nwc-connection.json"
    static let serviceKeyFile = "nwc-service-key"

    /// The wallet's NWC service key, made on first use.
    static func serviceKey(in folder: URL) throws -> NostrSecretKey {
        let file = folder.appendingPathComponent(serviceKeyFile)
        if let text = try? String(contentsOf: file, encoding: .utf8) { return try NostrSecretKey(text: text) }
        let (key, hex) = NostrSecretKey.generate()
        try OwnerOnlyFile.write(Data(hex.utf8), to: file)
        return key
    }

    static func load(from folder: URL) -> NwcConnection? {
        (try? Data(contentsOf: folder.appendingPathComponent(fileName))).flatMap { try? WireJSON.decode(NwcConnection.self, from: $0) }
    }
}

/// `herald-device nwc connect --relay wss://… [--relay …]`: an app connection to the development
/// wallet, registered with the NDS `listen` registered with (breez-lnurl's `POST /nwc/{pubkey}`,
/// signed by the wallet's node key), printed as a `nostr+walletconnect://` URI.
enum NwcCommand {
    static func run(_ arguments: Arguments) async throws -> Int32 {
        guard arguments.positional.dropFirst().first == "connect" else { throw UsageError("nwc takes connect --relay URL") }
        let relays = arguments.all("relay")
        guard !relays.isEmpty else { throw UsageError("nwc connect needs --relay wss://… (one or more)") }
        let environment = try DeviceEnvironment(arguments)
        let file = environment.walletFolder.appendingPathComponent("registration.json")
        guard let data = try? Data(contentsOf: file), let registration = try? WireJSON.decode(DeviceRegistration.self, from: data),
            let serverText = registration.server, let server = URL(string: serverText)
        else { throw UsageError("no registration in \(environment.walletFolder.path): run listen first") }
        let node = try NodeKeyFile.loadOrCreate(in: environment.walletFolder)
        let service = try NwcConnection.serviceKey(in: environment.walletFolder)
        let (app, appSecret) = NostrSecretKey.generate()
        var body = NwcRegistrationRequest(
            webhookUrl: registration.webhookURL, walletServicePubkey: service.publicKeyHex, appPubkey: app.publicKeyHex, relays: relays,
            signature: "")
        body.signature = LightningMessageSignature.sign(body.signedText, with: node)
        var request = URLRequest(url: server.appendingPathComponent("nwc/\(node.nodeID.hex)"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try WireJSON.encode(body)
        let (answer, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw ServerError(status: status, body: String(decoding: answer.prefix(500), as: UTF8.self)) }
        let connection = NwcConnection(relays: relays, appSecret: appSecret, appPubkey: app.publicKeyHex)
        try OwnerOnlyFile.write(try WireJSON.encode(connection), to: environment.walletFolder.appendingPathComponent(NwcConnection.fileName))
        // The info event tells clients what the wallet answers and in which encryptions: without
        // it a client (rust-nostr's among them) falls back to NIP-04.
        let responder = try NwcResponder(folder: environment.walletFolder)
        try await responder.publish(NwcResponder.infoEvent(service: service), to: relays, what: "the wallet's info event (kind \(NwcKind.info))")
        var uri = URLComponents()
        uri.scheme = "nostr+walletconnect"
        uri.host = service.publicKeyHex
        uri.queryItems = relays.map { URLQueryItem(name: "relay", value: $0) } + [URLQueryItem(name: "secret", value: appSecret)]
        printJSON([
            "event": "nwc_connected", "uri": uri.string ?? "", "wallet_service_pubkey": service.publicKeyHex, "app_pubkey": app.publicKeyHex,
        ])
        return 0
    }
}

/// Answers the development wallet's NWC requests (NIP-47, over NIP-44 v2 or NIP-04): `get_info`
/// and `get_balance`, anything else `NOT_IMPLEMENTED`, published as kind 23195 to the
/// connection's relays; a failure to publish is an error that names each relay and why. `HERALD_TLS_CA_FILE` and `HERALD_NOSTR_ALLOW_PRIVATE_RELAYS` reach a local relay.
struct NwcResponder: DevelopmentNwcService {
    let folder: URL
    let publisher: NostrRelayProvider
    let logger = Logger(label: "herald-device.nwc", factory: { _ in SwiftLogNoOpLogHandler() })

    init(folder: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.folder = folder
        publisher = try NostrRelayProvider(
            configuration: .init(
                allowPrivateRelays: environment["HERALD_NOSTR_ALLOW_PRIVATE_RELAYS"] == "true",
                extraTrustRootsPEMFile: environment["HERALD_TLS_CA_FILE"]))
    }

    static let methods = ["get_info", "get_balance"]

    /// The wallet's NIP-47 info event (kind 13194): the methods it answers, and both encryptions.
    static func infoEvent(service: NostrSecretKey) -> NostrEvent {
        NostrEvent.signed(
            kind: NwcKind.info, tags: [["encryption", "nip44_v2 nip04"]], content: methods.joined(separator: " "),
            createdAt: Int64(Date().timeIntervalSince1970), by: service)
    }

    /// Why an answer or the info event reached no relay.
    struct NotPublished: Error, CustomStringConvertible {
        var description: String
    }

    /// Publishes to every relay; throws, naming each relay and why, when none took it.
    func publish(_ event: NostrEvent, to relays: [String], what: String) async throws {
        var failures: [String] = []
        for relay in relays {
            let outcome = await publisher.send(
                PushMessage(kind: .background, data: [NostrRelayProvider.eventKey: event.json]), to: PushTarget(destination: .nostr, token: relay),
                logger: logger)
            if outcome.kind != .delivered { failures.append("\(relay): \(outcome.reason ?? outcome.kind.rawValue)") }
        }
        guard failures.count == relays.count else { return }
        throw NotPublished(description: "could not publish \(what) to any relay (\(failures.joined(separator: "; ")))")
    }

    /// Answers in the request's encryption: NIP-44 v2, or NIP-04 from a client that fell back to it.
    func answer(_ raw: String, balanceMsat: UInt64) async throws -> Bool {
        guard let connection = NwcConnection.load(from: folder) else { return false }
        let service = try NwcConnection.serviceKey(in: folder)
        let request = try WireJSON.decode(NostrEvent.self, from: Data(raw.utf8))
        guard request.isValid, request.kind == NwcKind.request, request.tags(named: "p").contains(where: { $0.first == service.publicKeyHex }),
            request.pubkey.lowercased() == connection.appPubkey
        else { return false }
        let nip04 = NIP04.isNIP04(request.content)
        let plaintext: String
        if nip04 {
            plaintext = try NIP04.decrypt(request.content, key: try NIP04.sharedKey(secret: service, publicKeyHex: request.pubkey))
        } else {
            plaintext = try NIP44.decrypt(request.content, conversationKey: try NIP44.conversationKey(secret: service, publicKeyHex: request.pubkey))
        }
        let method = (try? JSONParser.parse(Array(plaintext.utf8)))?["method"]?.stringValue ?? ""
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("result_type")
        writer.string(method)
        switch method {
        case "get_balance":
            writer.key("result")
            writer.value(.object(["balance": .int(Int64(clamping: balanceMsat))]))
        case "get_info":
            writer.key("result")
            writer.value(
                .object([
                    "alias": .string("herald-device"), "color": .string("#f7931a"), "pubkey": .string(service.publicKeyHex),
                    "network": .string("regtest"), "block_height": .int(0), "block_hash": .string(String(repeating: "0", count: 64)),
                    "methods": .array(Self.methods.map { .string($0) }), "notifications": .array([]),
                ]))
        default:
            writer.key("error")
            writer.value(
                .object(["code": .string("NOT_IMPLEMENTED"), "message": .string("the development wallet answers get_info and get_balance")]))
        }
        writer.endObject()
        let body = String(decoding: writer.bytes, as: UTF8.self)
        let content =
            nip04
            ? try NIP04.encrypt(body, key: try NIP04.sharedKey(secret: service, publicKeyHex: request.pubkey))
            : try NIP44.encrypt(body, conversationKey: try NIP44.conversationKey(secret: service, publicKeyHex: request.pubkey))
        let response = NostrEvent.signed(
            kind: NwcKind.response, tags: [["p", request.pubkey], ["e", request.id]] + (nip04 ? [] : [["encryption", "nip44_v2"]]),
            content: content, createdAt: Int64(Date().timeIntervalSince1970), by: service)
        try await publish(response, to: connection.relays, what: "the answer to \(method.isEmpty ? "the request" : method)")
        return true
    }
}
