import Foundation
import HTTPTypes
import HeraldPush
import HeraldSecp256k1
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// The registration breez-lnurl's clients send (misty-breez `webhook_request_builder.dart`): a
/// wallet asks Herald to watch its NWC service key on its relays and wake it through its
/// webhook URL. Signed with the node key in the path, as an LN signed message.
struct NwcRoutes: Sendable {
    let store: any NwcStore
    let watcher: NwcWatcher
    /// Tells this server's device webhook URLs, which are pushed to, from another service's.
    let directory: DeviceDirectory
    let settings: ServerSettings
    let limiter: RateLimiter
    let now: @Sendable () -> Date

    static let maxRelays = 10
    /// `time` of an unregistration may be this far from the clock (breez-lnurl checks none).
    static let maxTimeSkew: TimeInterval = 60

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("nwc/:pubkey") { request, context in try await add(request, context: context) }
        router.delete("nwc/:pubkey") { request, context in try await remove(request, context: context) }
    }

    func add(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        try limiter.admitRegistration(from: context.clientAddress)
        let owner = try Self.owner(context)
        var request = request
        let body = try await Edge.readJSONBody(NwcRegistrationRequest.self, from: &request)
        guard LightningMessageSignature.verify(body.signedText, signature: body.signature, nodeID: owner) else {
            throw APIError(.invalidSignature, "signature is not the path key's over webhookUrl-walletServicePubkey-appPubkey-[relays]")
        }
        try Self.checkNostrKey(body.walletServicePubkey, "walletServicePubkey")
        try Self.checkNostrKey(body.appPubkey, "appPubkey")
        guard (1...Self.maxRelays).contains(body.relays.count) else {
            throw APIError(.invalidRelays, "relays must name 1 to \(Self.maxRelays) relays")
        }
        var relays: Set<String> = []
        for relay in body.relays {
            guard let normalized = NostrRelayURL.normalized(relay) else {
                throw APIError(.invalidRelays, "a relay is a wss:// URL with a host, not '\(relay.prefix(80))'")
            }
            relays.insert(normalized)
        }
        for relay in relays where !settings.nwc.relays.allowPrivateRelays {
            let parsed = URLComponents(string: relay)
            do {
                _ = try await EndpointAddresses.checkedAddress(host: parsed?.host ?? relay, port: parsed?.port ?? 443)
            } catch {
                throw APIError(
                    error.unresolvable ? .unresolvableRelay : .privateRelay,
                    error.unresolvable
                        ? "relay \(relay.prefix(80)) does not resolve" : "relay \(relay.prefix(80)) refused: \(error) (nostr.allow_private_relays)")
            }
        }
        try await checkRelayBudget(relays, owner: owner.hex, replacing: (body.walletServicePubkey, body.appPubkey))
        if !directory.isDeviceWebhook(body.webhookUrl) {
            try await Self.checkForeignWebhook(body.webhookUrl, policy: settings.webPush)
        }
        let moment = now()
        let registration = NwcRegistration(
            walletServicePubkey: body.walletServicePubkey, appPubkey: body.appPubkey, ownerPubkey: owner.hex, webhookURL: body.webhookUrl,
            relays: relays.sorted(), createdAt: moment, lastUsedAt: moment)
        let outcome: NwcPutOutcome = try await store.putNwcRegistration(registration, limit: settings.nwc.registrationsPerKey)
        switch outcome {
        case .stored: break
        case .limitReached:
            throw APIError(.tooManyRegistrations, "this key holds \(settings.nwc.registrationsPerKey) registrations already")
        }
        watcher.registrationsChanged()
        return Self.text("Pubkey registered successfully")
    }

    func remove(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let owner = try Self.owner(context)
        var request = request
        let body = try await Edge.readJSONBody(NwcUnregistrationRequest.self, from: &request)
        guard LightningMessageSignature.verify(body.signedText, signature: body.signature, nodeID: owner) else {
            throw APIError(.invalidSignature, "signature is not the path key's over time-walletServicePubkey-appPubkey")
        }
        guard abs(Double(body.time) - now().timeIntervalSince1970) <= Self.maxTimeSkew else {
            throw APIError(.staleTime, "time must be within \(Int(Self.maxTimeSkew)) s of the server's clock")
        }
        _ = try await store.deleteNwcRegistration(walletServicePubkey: body.walletServicePubkey, appPubkey: body.appPubkey, owner: owner.hex)
        watcher.registrationsChanged()
        // As breez-lnurl answers, whether there was one or not.
        return Self.text("Pubkey unregistered successfully")
    }

    /// Each relay is a connection Herald holds, and whoever registers names them: at most
    /// `nostr.max_relays` distinct relays in all, `nostr.max_relays_per_host` on one host, and
    /// ``maxRelays`` across one node key's registrations (`400 too_many_relays`). Relays already
    /// watched cost nothing more.
    func checkRelayBudget(_ relays: Set<String>, owner: String, replacing pair: (String, String)) async throws {
        let owned: [NwcRegistration] = try await store.nwcRegistrations(owner: owner)
        let others = owned.filter { $0.walletServicePubkey != pair.0 || $0.appPubkey != pair.1 }
        let named = Set(others.flatMap(\.relays).map { NostrRelayURL.normalized($0) ?? $0 })
        guard named.union(relays).count <= Self.maxRelays else {
            throw APIError(.tooManyRelays, "one node key's registrations name \(Self.maxRelays) relays at most")
        }
        guard watcher.admitRelays(relays, maxTotal: settings.nwc.maxRelays, maxPerHost: settings.nwc.maxRelaysPerHost) else {
            throw APIError(
                .tooManyRelays,
                "this server watches \(settings.nwc.maxRelays) relays at most, \(settings.nwc.maxRelaysPerHost) on one host (nostr.max_relays, nostr.max_relays_per_host)"
            )
        }
    }

    /// Another service's webhook (breez-lnurl's clients register Breez's): Web Push's rules,
    /// https and public addresses unless the operator allows otherwise.
    static func checkForeignWebhook(_ url: String, policy: WebPushPolicy) async throws {
        guard url.utf8.count <= 2048, (try? PushTokenForm.check(url, destination: .webhook)) != nil, let parsed = URL(string: url),
            let host = parsed.host
        else { throw APIError(.invalidWebhookURL, "webhookUrl must be an http(s) URL with a host") }
        guard policy.allowInsecureEndpoints || parsed.scheme?.lowercased() == "https" else {
            throw APIError(.invalidWebhookURL, "webhookUrl must be https (webpush.allow_insecure_endpoints allows http)")
        }
        if !policy.allowPrivateEndpoints,
            let why = await EndpointAddresses.refusal(host: host, port: parsed.port ?? (parsed.scheme?.lowercased() == "https" ? 443 : 80))
        {
            throw APIError(.privateWebhookURL, "webhookUrl refused: \(why) (webpush.allow_private_endpoints)")
        }
    }

    static func owner(_ context: HeraldRequestContext) throws -> NodeID {
        guard let text = context.parameters.get("pubkey"), text.utf8.count == 66, text.utf8.allSatisfy(\.isLowerHex), let node = NodeID(hex: text)
        else { throw APIError(.invalidPubkey, "the path names a compressed secp256k1 key, 66 lower-case hex digits") }
        return node
    }

    static func checkNostrKey(_ text: String, _ field: String) throws {
        guard text.utf8.count == 64, text.utf8.allSatisfy(\.isLowerHex), NodeID(hex: "02" + text) != nil else {
            throw APIError(.invalidPubkey, "\(field) must be an x-only Nostr key, 64 lower-case hex digits")
        }
    }

    static func text(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
