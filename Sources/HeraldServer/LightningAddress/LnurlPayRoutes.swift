import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// The Lightning-address service (LUD-06, LUD-12, LUD-16, LUD-21) in front of claimed usernames.
///
/// Each payer request wakes the owner's phone through the reply relay:
/// `GET /.well-known/lnurlp/{username}` → `lnurlpay_info`, `GET /lnurlp/{username}/callback?amount=`
/// → `lnurlpay_invoice`, `GET /lnurlp/{username}/verify/{payment_hash}` → `lnurlpay_verify`. The
/// device's answer reaches the payer byte for byte; every failure is `{"status":"ERROR","reason":…}`.
struct LnurlPayRoutes: Sendable {
    let addresses: any LightningAddressStore
    let devices: any DeviceStore
    let cache: any ReplyStore
    let delivery: PushDelivery
    let settings: ServerSettings
    let zaps: ZapReceipts
    let now: @Sendable () -> Date

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.get(".well-known/lnurlp/:username") { _, context in await lnurl(context) { try await info(context) } }
        router.get("lnurlp/:username/callback") { request, context in
            await lnurl(context) { try await invoice(request, context) }
        }
        router.get("lnurlp/:username/verify/:payment_hash") { _, context in await lnurl(context) { try await verify(context) } }
        // The device, not a payer: Herald's own JSON errors.
        router.post("lnurlp/:username/zap/:payment_hash") { request, context in try await zapPaid(request, context) }
    }

    // MARK: The three steps

    func info(_ context: HeraldRequestContext) async throws -> Response {
        let address = try await lookUp(context)
        let key = Self.cachePrefix(deviceID: address.device.id) + address.username + ":info"
        if let cached = try await cache.cachedReply(key: key, now: now()) { return advertisingZaps(cached).response() }

        let webhook = WebhookRequest(
            form: .template,
            name: NotificationType.lnurlpayInfo.rawValue,
            data: [
                "callback_url": .string(callbackURL(address.username)),
                "identifier": .string(identifier(address.username)),
            ]
        )
        let answer = try await ask(webhook, address: address)
        if Self.isLnurlError(answer) { return ReplyAnswer(body: answer.body).response() }
        guard let info = try? WireJSON.decode(LnurlPayInfo.self, from: answer.body),
            info.tag == LnurlPayInfo.payRequestTag, info.minSendable >= 1, info.minSendable <= info.maxSendable,
            // No more than every bitcoin there will be: also keeps amounts within Int64 downstream.
            info.maxSendable <= Self.maximumSendable
        else { throw LnurlFailure(.badGateway, "The wallet answered with an invalid pay request") }
        try await addresses.savePayInfo(
            StoredPayInfo(
                minSendable: info.minSendable, maxSendable: info.maxSendable, metadata: info.metadata,
                commentAllowed: info.commentAllowed
            ),
            username: address.username, deviceID: address.device.id, now: now()
        )
        try await store(answer, key: key, deviceID: address.device.id)
        return advertisingZaps(answer).response()
    }

    /// The pay request with `allowsNostr` and `nostrPubkey` (NIP-57 Appendix C) when zaps are on:
    /// Nostr clients offer to zap only an address that says so.
    func advertisingZaps(_ answer: ReplyAnswer) -> ReplyAnswer {
        guard let zaps = settings.zaps, case .object(var fields)? = try? WireJSON.decode(JSONValue.self, from: answer.body)
        else { return answer }
        fields["allowsNostr"] = .bool(true)
        fields["nostrPubkey"] = .string(zaps.key.publicKeyHex)
        guard let body = try? WireJSON.encode(JSONValue.object(fields)) else { return answer }
        return ReplyAnswer(body: body, cacheMaxAge: answer.cacheMaxAge)
    }

    /// 21 million bitcoin in millisatoshis.
    static let maximumSendable: UInt64 = 21_000_000 * 100_000_000 * 1_000

    func invoice(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        let address = try await lookUp(context)
        let query = request.uri.queryParameters
        guard let amountText = query.get("amount"), let amount = UInt64(amountText) else {
            throw LnurlFailure(.badRequest, "Missing or invalid amount: give millisatoshis as ?amount=")
        }
        guard let info = address.payInfo else {
            throw LnurlFailure(.badRequest, "Fetch the pay request at \(Self.wellKnownURL(settings: settings, username: address.username)) first")
        }
        guard amount >= info.minSendable, amount <= info.maxSendable else {
            throw LnurlFailure(
                .badRequest, "Amount out of range: \(amount) msat is not within \(info.minSendable) to \(info.maxSendable) msat"
            )
        }
        let comment = query.get("comment").flatMap { $0.isEmpty ? nil : $0 }
        if let comment {
            let allowed = info.commentAllowed ?? 0
            guard allowed > 0 else { throw LnurlFailure(.badRequest, "This address does not take comments") }
            guard comment.count <= allowed else {
                throw LnurlFailure(.badRequest, "Comment is too long: at most \(allowed) characters")
            }
        }
        // In range of the stored limits; `exactly` all the same, so no stored value can trap here.
        guard let signedAmount = Int64(exactly: amount) else {
            throw LnurlFailure(.badRequest, "Amount out of range: \(amount) msat")
        }
        var data: [String: JSONValue] = [
            "amount": .int(signedAmount),
            "verify_url": .string(verifyURL(address.username, hash: LnurlPayInvoice.paymentHashPlaceholder)),
            "identifier": .string(identifier(address.username)),
            // The exact string the payer got: the invoice's description hash must commit to it.
            "metadata": .string(info.metadata),
        ]
        if let comment { data["comment"] = .string(comment) }
        let zap = try await zaps.request(
            query.get("nostr"), amount: amount, payURL: Self.wellKnownURL(settings: settings, username: address.username))
        if let zap {
            // The invoice commits to the zap request instead of the metadata (NIP-57).
            data["nostr"] = .string(zap.json)
            data["zap_url"] = .string(zapURL(address.username, hash: LnurlPayInvoice.paymentHashPlaceholder))
        }
        let webhook = WebhookRequest(form: .template, name: NotificationType.lnurlpayInvoice.rawValue, data: data)
        let answer = try await ask(webhook, address: address)
        if Self.isLnurlError(answer) { return ReplyAnswer(body: answer.body).response() }
        guard let invoice = try? WireJSON.decode(LnurlPayInvoice.self, from: answer.body), !invoice.pr.isEmpty else {
            throw LnurlFailure(.badGateway, "The wallet answered with an invalid invoice")
        }
        if let zap { try await zaps.keep(zap, invoice: invoice.pr, deviceID: address.device.id) }
        // An invoice is for one payer only: never cached, whatever the device sent.
        return ReplyAnswer(body: answer.body).response()
    }

    func verify(_ context: HeraldRequestContext) async throws -> Response {
        let address = try await lookUp(context)
        guard let hash = context.parameters.get("payment_hash")?.lowercased(), hash.utf8.count == 64,
            hash.utf8.allSatisfy(\.isLowerHex)
        else { throw LnurlFailure(.badRequest, "Invalid payment hash") }
        let key = Self.cachePrefix(deviceID: address.device.id) + address.username + ":verify:" + hash
        if let cached = try await cache.cachedReply(key: key, now: now()) { return cached.response() }

        let webhook = WebhookRequest(
            form: .template, name: NotificationType.lnurlpayVerify.rawValue, data: ["payment_hash": .string(hash)]
        )
        let answer = try await ask(webhook, address: address)
        if Self.isLnurlError(answer) { return ReplyAnswer(body: answer.body).response() }
        guard let verification = try? WireJSON.decode(LnurlPayVerification.self, from: answer.body) else {
            throw LnurlFailure(.badGateway, "The wallet answered with an invalid verification")
        }
        if verification.settled, let preimage = verification.preimage {
            // A settled zap's receipt goes out now if the device has not reported it already;
            // the payer's answer never waits on it.
            do {
                _ = try await zaps.paid(paymentHash: hash, preimage: preimage, deviceID: address.device.id, app: address.device.app)
            } catch {
                context.logger.warning("zap receipt not published from the verify answer", metadata: ["error": "\(error)"])
            }
        }
        try await store(answer, key: key, deviceID: address.device.id)
        return answer.response()
    }

    /// `POST /lnurlp/{username}/zap/{payment_hash}` `{"preimage": …}`: the device reports the
    /// payment of a zap's invoice; the receipt is published to the request's relays.
    func zapPaid(_ request: Request, _ context: HeraldRequestContext) async throws -> Response {
        guard let address = try await address(context) else {
            throw APIError.notFound("no Lightning address \(Self.username(context).prefix(64))")
        }
        let hash = context.parameters.get("payment_hash")?.lowercased() ?? ""
        var request = request
        let body = try await Edge.readJSONBody(ZapPaymentReport.self, from: &request)
        guard let answer = try await zaps.paid(paymentHash: hash, preimage: body.preimage, deviceID: address.device.id, app: address.device.app)
        else {
            throw APIError(.unknownZap, "no zap request was kept for this payment hash")
        }
        return try JSONResponse.make(answer, status: .accepted)
    }

    // MARK: Helpers

    /// The address the path's `:username` names, or an LNURL 404.
    func lookUp(_ context: HeraldRequestContext) async throws -> LightningAddress {
        guard let address = try await address(context) else {
            throw LnurlFailure(.notFound, "Unknown Lightning address \(Self.username(context).prefix(64))@\(host)")
        }
        return address
    }

    /// The address the path's `:username` names; nil for none or an invalid name.
    func address(_ context: HeraldRequestContext) async throws -> LightningAddress? {
        guard let username = LightningAddressName.valid(Self.username(context)) else { return nil }
        return try await addresses.lightningAddress(username: username)
    }

    static func username(_ context: HeraldRequestContext) -> String {
        context.parameters.get("username")?.lowercased() ?? ""
    }

    /// Wakes the owner's phone and waits for its answer.
    func ask(_ webhook: WebhookRequest, address: LightningAddress) async throws -> ReplyAnswer {
        // The directory decides, as for every push: a dead token, or a device whose token moved
        // and is not confirmed again (`registration: challenge`), is not asked.
        let device = address.device
        let isDead = try await devices.resolveWebhookToken(device.token, rawPlatform: device.platform).isDead
        guard try await delivery.directory.skip(device, isDead: isDead) == nil else { throw Self.unreachable }
        // Checked just above: the recipient as the directory makes it, without asking again.
        switch try await delivery.ask(webhook, to: DeviceDirectory.recipient(device), appData: nil) {
        case .answered(let answer): return answer
        case .timedOut: throw LnurlFailure(.gatewayTimeout, "The wallet did not answer in time; try again")
        case .shuttingDown: throw LnurlFailure(.serviceUnavailable, "The server is restarting; try again")
        case .tokenDead: throw Self.unreachable
        }
    }

    static let unreachable = LnurlFailure(.gone, "The wallet can no longer be reached")

    /// Keeps an answer the device marked cacheable (`Cache-Control: max-age`), for at most a day
    /// (a pay request) or a week (a verify answer), and only when it is the size LNURL answers
    /// are: the device is not trusted to make the server keep anything for long.
    func store(_ answer: ReplyAnswer, key: String, deviceID: String) async throws {
        guard let lifetime = Self.cacheLifetime(answer, key: key) else { return }
        try await cache.cacheReply(
            key: key, answer: answer, until: now().addingTimeInterval(lifetime),
            budget: CacheBudget(prefix: Self.cachePrefix(deviceID: deviceID), maxBytes: Self.maxCachedBytesPerDevice), now: now())
    }

    /// What one device may have kept at once: a pay request and a few hundred verify answers.
    static let maxCachedBytesPerDevice = 256 * 1024

    /// LNURL answers are a few hundred bytes; a larger one is passed on but not kept.
    static let maxCachedBytes = 4096

    /// How long an answer is kept: its `max-age`, capped; nil when it is not kept at all.
    static func cacheLifetime(_ answer: ReplyAnswer, key: String) -> TimeInterval? {
        guard let maxAge = answer.cacheMaxAge, answer.body.count <= maxCachedBytes else { return nil }
        let cap: TimeInterval = key.hasSuffix(":info") ? 86_400 : 604_800
        return min(TimeInterval(maxAge), cap)
    }

    /// Whether the device answered with its own LNURL error: passed on as it is, never cached.
    static func isLnurlError(_ answer: ReplyAnswer) -> Bool {
        (try? WireJSON.decode(LnurlError.self, from: answer.body))?.status == LnurlStatus.error
    }

    var host: String { LightningAddressName.host(of: settings.publicURL) }
    func identifier(_ username: String) -> String { "\(username)@\(host)" }
    func callbackURL(_ username: String) -> String { "\(settings.publicURL)/lnurlp/\(username)/callback" }
    func verifyURL(_ username: String, hash: String) -> String { "\(settings.publicURL)/lnurlp/\(username)/verify/\(hash)" }
    func zapURL(_ username: String, hash: String) -> String { "\(settings.publicURL)/lnurlp/\(username)/zap/\(hash)" }

    static func wellKnownURL(settings: ServerSettings, username: String) -> String {
        "\(settings.publicURL)/.well-known/lnurlp/\(username)"
    }

    /// Cached answers are keyed under the owning device, so a rename or release drops them all.
    static func cachePrefix(deviceID: String) -> String { "lnurlp:\(deviceID):" }

    /// Runs a step, turning every failure into the LNURL error shape.
    func lnurl(_ context: HeraldRequestContext, _ step: () async throws -> Response) async -> Response {
        do {
            return try await step()
        } catch let failure as LnurlFailure {
            return failure.response()
        } catch let error as APIError {
            return LnurlFailure(error).response()
        } catch let error as StoreError {
            context.logger.error("store failure", metadata: ["error": "\(error)"])
            return LnurlFailure(APIError.storeUnavailable()).response()
        } catch {
            context.logger.error("lnurl-pay step failed", metadata: ["error": "\(String(reflecting: error))"])
            return LnurlFailure(.internalServerError, "The Lightning-address service failed; try again").response()
        }
    }
}

/// An LNURL failure: an HTTP status and `{"status":"ERROR","reason":…}`.
///
/// One that came from an ``APIError`` (store unavailable, overloaded, rate limited) also keeps
/// its `error` code and headers (`Retry-After`): LNURL wallets read `status` and `reason` and
/// ignore the rest, while a client of Herald's own API gets the code it knows.
struct LnurlFailure: Error, Sendable {
    var status: HTTPResponse.Status
    var reason: String
    var code: String?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    init(_ error: APIError) {
        self.init(error.status, error.message)
        code = error.code.rawValue
        headers = error.headers
    }

    struct Body: Encodable {
        var status = LnurlStatus.error
        var reason: String
        var error: String?
    }

    func response() -> Response {
        let body = (try? WireJSON.encode(Body(reason: reason, error: code))) ?? Data(#"{"status":"ERROR"}"#.utf8)
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
