import Foundation
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore

/// The wallet-backend API (seed 002): user sessions and events, each behind an API key with
/// its scope. The backend's login handler makes one call, its ledger one call per event.
struct BackendRoutes: Sendable {
    let keys: any APIKeyStore
    let sessions: SessionRoutes
    let events: BackendEventRoutes

    init(
        intake: OutboxIntake,
        store: some APIKeyStore & SessionStore,
        providers: PushRouter,
        metrics: HeraldMetrics,
        settings: ServerSettings,
        now: @escaping @Sendable () -> Date
    ) {
        keys = store
        sessions = SessionRoutes(sessions: store, providers: providers, now: now)
        events = BackendEventRoutes(
            fanOut: BackendFanOut(
                intake: intake, sessions: store, providers: providers, metrics: metrics, jobTTL: settings.jobTTL, now: now
            ),
            sessions: store,
            now: now
        )
    }

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        // Two groups on one path: the middleware of each guards only the routes added through it.
        sessions.register(on: router.group("users").add(middleware: APIKeyAuthenticator(keys: keys, scope: .sessions)))
        events.register(on: router.group("users").add(middleware: APIKeyAuthenticator(keys: keys, scope: .events)))
    }
}

/// A user or session id from the path: 1 to 128 bytes of letters, digits and `. _ ~ @ + -`,
/// so ids are safe in URLs, logs and (never containing `:`) in composed idempotency keys.
func backendID(_ name: String, in context: HeraldRequestContext) throws -> String {
    guard let value = context.parameters.get(name), BackendIDRules.isValid(value) else {
        throw APIError.badRequest(
            "invalid_\(name)", "\(name) must be 1 to 128 characters of letters, digits and . _ ~ @ + -"
        )
    }
    return value
}

enum BackendIDRules {
    static func isValid(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 128
            && value.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || [0x2E, 0x5F, 0x7E, 0x40, 0x2B, 0x2D].contains(byte)
            }
    }
}

/// Reads a JSON object body into `T`; an empty body gives nil. Errors name the field at fault.
func decodeOptionalBody<T: Decodable>(_ type: T.Type, from request: inout Request, limit: Int = 16 * 1024) async throws
    -> T?
{
    let buffer: ByteBuffer
    do {
        buffer = try await request.collectBody(upTo: limit)
    } catch is NIOTooManyBytesError {
        throw APIError(.contentTooLarge, "body_too_large", "the body is over \(limit) bytes")
    }
    guard buffer.readableBytes > 0 else { return nil }
    let data = Data(buffer: buffer)
    do {
        return try decodeJSONObject(T.self, from: data)
    } catch let error as DecodingError {
        throw APIError(.unprocessableContent, "invalid_body", describe(error))
    }
}

/// Decodes a request body that must be a JSON object. JSON faults get the JSON error shape; a
/// `DecodingError` (the wrong fields) is left to the caller to word.
func decodeJSONObject<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let parsed = try parseJSONObject(data)
    do {
        return try WireJSON.decode(T.self, parsed: parsed, from: data)
    } catch let error as JSONParseError {
        throw APIError.badRequest("invalid_json", "the body cannot be read: \(error)")
    }
}

/// Parses a request body that must be a JSON object, with the JSON error shape when it is not.
func parseJSONObject(_ data: Data) throws -> JSONValue {
    let parsed: JSONValue
    do {
        parsed = try JSONParser.parse(data)
    } catch {
        throw APIError.badRequest("invalid_json", "the body is not valid JSON: \(error)")
    }
    guard case .object = parsed else { throw APIError.badRequest("invalid_json", "the body is not a JSON object") }
    return parsed
}

/// Reads a required JSON object body into `T`.
func decodeBody<T: Decodable>(_ type: T.Type, from request: inout Request, limit: Int = 16 * 1024) async throws -> T {
    guard let value = try await decodeOptionalBody(type, from: &request, limit: limit) else {
        throw APIError.badRequest("invalid_json", "the body is empty; expected a JSON object")
    }
    return value
}

/// A decoding failure in words a backend developer can act on.
private func describe(_ error: DecodingError) -> String {
    func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
        (codingPath + (last.map { [$0] } ?? [])).map(\.stringValue).joined(separator: ".")
    }
    switch error {
    case .keyNotFound(let key, let context):
        return "the field '\(path(context.codingPath, key))' is required"
    case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
        return "the field '\(path(context.codingPath))' must be \(type == String.self ? "a string" : type == Bool.self ? "true or false" : "\(type)")"
    case .dataCorrupted(let context):
        return "the field '\(path(context.codingPath))' is not valid: \(context.debugDescription)"
    @unknown default:
        return "the body does not match the expected fields"
    }
}
