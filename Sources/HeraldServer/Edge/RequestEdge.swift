import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// What every route reads from a request, each read one way: a client gets the same answer for
/// the same fault whichever route it calls.
enum Edge {
    /// The cap on the small JSON bodies of the device and backend APIs.
    static let jsonBodyLimit = 16 * 1024
    static let idempotencyKeyHeader = HTTPField.Name("Idempotency-Key")!
    /// On an answer to a repeated `Idempotency-Key`: nothing new was pushed.
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    // MARK: Bodies

    /// The body, or nil when empty. `tooLarge` is for a route that documents its own 413.
    static func readBody(_ request: inout Request, limit: Int, tooLarge: APIError? = nil) async throws -> ByteBuffer? {
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge ?? APIError.bodyTooLarge(limit: limit)
        }
        return body.readableBytes > 0 ? body : nil
    }

    /// A body that must be there.
    static func readRequiredBody(_ request: inout Request, limit: Int, tooLarge: APIError? = nil) async throws -> ByteBuffer {
        guard let body = try await readBody(&request, limit: limit, tooLarge: tooLarge) else { throw APIError.emptyBody }
        return body
    }

    /// A JSON object body decoded into `T`.
    static func readJSONBody<T: Decodable>(_ type: T.Type, from request: inout Request, limit: Int = jsonBodyLimit)
        async throws -> T
    {
        guard let value = try await readOptionalJSONBody(type, from: &request, limit: limit) else { throw APIError.emptyBody }
        return value
    }

    /// As ``readJSONBody(_:from:limit:)``, for routes where every field is optional: empty is nil.
    static func readOptionalJSONBody<T: Decodable>(
        _ type: T.Type, from request: inout Request, limit: Int = jsonBodyLimit
    ) async throws -> T? {
        guard let body = try await readBody(&request, limit: limit) else { return nil }
        return try decodeJSONObject(T.self, from: Data(buffer: body))
    }

    /// Parsed strictly first, so `JSONDecoder` never sees a body it could trap on.
    private static func decodeJSONObject<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(T.self, parsed: try parseJSONObject(data), from: data)
    }

    /// Decodes a body already parsed (``parseJSONObject(_:)``): a route that looks at its
    /// shape first (`POST /wake` takes two) decodes it once.
    static func decode<T: Decodable>(_ type: T.Type, parsed: JSONValue, from data: Data) throws -> T {
        do {
            return try WireJSON.decode(T.self, parsed: parsed, from: data)
        } catch let error as JSONParseError {
            throw APIError.invalidJSON("the body cannot be read: \(error)")
        } catch let error as DecodingError {
            throw APIError.invalidBody(describe(error))
        }
    }

    static func parseJSONObject(_ data: Data) throws -> JSONValue {
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(data)
        } catch {
            throw APIError.invalidJSON("the body is not valid JSON: \(error)")
        }
        guard case .object = parsed else { throw APIError.invalidJSON("the body is not a JSON object") }
        return parsed
    }

    // MARK: Headers

    /// The credential of an `Authorization: Bearer` header (any case); nil when absent or empty.
    static func bearerCredential(_ headers: HTTPFields) -> String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let credential = parts[1].trimmingCharacters(in: .whitespaces)
        return credential.isEmpty ? nil : credential
    }

    /// The `Idempotency-Key` header under `scope`, so one caller's key never matches another's job.
    static func idempotencyKey(_ headers: HTTPFields, scope: String) throws -> String? {
        guard let key = headers[idempotencyKeyHeader] else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255 else { throw APIError.invalidIdempotencyKey }
        return "\(scope):\(key)"
    }

    // MARK: Fields

    /// A device's platform (`ios`, `android`, `webpush`).
    static func parsePlatform(_ text: String) throws -> Platform {
        guard let platform = Platform(rawValue: text.lowercased()) else { throw APIError.unknownPlatform(text) }
        return platform
    }

    /// Any destination a job may have, `nostr` (zap receipts) included: for filters over the
    /// outbox, which name it `platform` as the job's column does.
    static func parseJobDestination(_ text: String) throws -> JobDestination {
        guard let destination = JobDestination(rawValue: text.lowercased()) else { throw APIError.unknownPlatform(text) }
        return destination
    }

    /// The app a request names (absent: the default one), if it is configured; `400 unknown_app`
    /// otherwise, before anything is stored.
    static func checkApp(_ name: String?, providers: PushRouter) throws -> String {
        let app = name ?? PushTarget.defaultApp
        guard providers.knows(app: app) else {
            let known = providers.apps.keys.sorted().joined(separator: ", ")
            throw APIError(.unknownApp, "no app named '\(app.prefix(64))' is configured; configured: \(known)")
        }
        return app
    }

    /// Only the length: whether a token works is its provider's to judge.
    static func checkPushToken(_ token: String, field: String = "push_token") throws {
        guard !token.isEmpty, token.utf8.count <= PushTarget.maximumTokenBytes else {
            throw APIError(.invalidToken, "\(field) must be 1 to \(PushTarget.maximumTokenBytes) bytes")
        }
    }

    /// A push token's form for its platform (``PushTokenForm``): `400 invalid_token` otherwise,
    /// the same at every entrance whatever provider is configured. Returns its one spelling
    /// (``PushTokenForm/normalized(_:platform:)``), the only one stored, limited or keyed on.
    @discardableResult
    static func checkPushToken(_ token: String, platform: Platform, field: String = "push_token") throws -> String {
        try checkPushToken(token, field: field)
        do throws(PushValidationError) {
            try PushTokenForm.check(token, platform: platform)
        } catch {
            throw APIError(.invalidToken, "\(field) is not a valid \(platform.rawValue) token: \(error.message)")
        }
        return PushTokenForm.normalized(token, platform: platform)
    }

    /// What a device or session is reached at: the push token for `ios` and `android`, the
    /// subscription's stored form for `webpush`, each checked as its platform requires. A Web
    /// Push endpoint must be https (unless the operator allows http) and, unless the operator
    /// allows it, resolve to public addresses only: whoever registers chooses it.
    static func pushAddress(
        platform: Platform, pushToken: String?, subscription: WebPushSubscription?, policy: WebPushPolicy
    ) async throws -> String {
        guard platform == .webpush else {
            if subscription != nil {
                throw APIError(.invalidSubscription, "subscription is for platform webpush; \(platform.rawValue) takes push_token")
            }
            guard let pushToken else {
                // As a body without the field has always been answered.
                throw APIError(.invalidBody, "the field 'push_token' is required")
            }
            return try checkPushToken(pushToken, platform: platform)
        }
        guard let subscription else {
            throw APIError(
                .invalidSubscription,
                "platform webpush takes the subscription object: {\"endpoint\": \"https://…\", \"keys\": {\"p256dh\": …, \"auth\": …}}")
        }
        if pushToken != nil {
            throw APIError(.invalidSubscription, "platform webpush takes subscription, not push_token")
        }
        let checked: WebPushSubscription.Checked
        do {
            checked = try subscription.checked(allowInsecure: policy.allowInsecureEndpoints)
        } catch {
            throw APIError(.invalidSubscription, "subscription.\(error.field): \(error.message)")
        }
        if !policy.allowPrivateEndpoints, let host = checked.endpoint.host {
            let port = checked.endpoint.port ?? (checked.endpoint.scheme == "http" ? 80 : 443)
            do {
                _ = try await EndpointAddresses.checkedAddress(host: host, port: port)
            } catch {
                throw APIError(error.unresolvable ? .unresolvableEndpoint : .privateEndpoint, "the endpoint's host \(error)")
            }
        }
        return subscription.storageToken
    }

    /// A decoding failure in words a developer can act on.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (codingPath + (last.map { [$0] } ?? [])).map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "the field '\(path(context.codingPath, key))' is required"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return
                "the field '\(path(context.codingPath))' must be \(type == String.self ? "a string" : type == Bool.self ? "true or false" : "\(type)")"
        case .dataCorrupted(let context):
            return "the field '\(path(context.codingPath))' is not valid: \(context.debugDescription)"
        @unknown default:
            return "the body does not match the expected fields"
        }
    }

    /// `registration: challenge`: a device that has not posted its code back is reached by
    /// nothing but its challenge (`403 device_unconfirmed`).
    static func requireConfirmed(_ device: Device, settings: ServerSettings, challenges: any DeviceChallengeStore) async throws {
        guard settings.registration == .challenge, try await challenges.isUnconfirmed(deviceID: device.id) else { return }
        throw APIError(
            .deviceUnconfirmed,
            "the device has not yet proven it receives pushes at its token (registration: challenge); its app confirms by itself once the challenge push arrives"
        )
    }
}
