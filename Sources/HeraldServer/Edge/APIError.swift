import Foundation
import HTTPTypes
import HeraldPush
import HeraldStore
import HeraldWire
import Hummingbird
import NIOCore
import NIOHTTP1

/// An error a client sees: its code's status and `{"error": "<code>", "message": "…"}`.
public struct APIError: HTTPResponseError, Sendable {
    /// Stable and machine-readable; it decides the status.
    public var code: ErrorCode
    public var message: String
    public var headers: HTTPFields

    public init(_ code: ErrorCode, _ message: String, headers: HTTPFields = [:]) {
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var status: HTTPResponse.Status { code.status }

    struct Body: Codable {
        var error: String
        var message: String
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(Body(error: code.rawValue, message: message), status: status)
        response.headers.append(contentsOf: headers)
        return response
    }
}

extension APIError {
    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }
    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, message, headers: [.wwwAuthenticate: "Bearer"])
    }

    static func bodyTooLarge(limit: Int) -> APIError {
        APIError(.bodyTooLarge, "the body is over \(limit) bytes")
    }
    static let emptyBody = APIError.invalidJSON("the body is empty; expected a JSON object")
    static func invalidJSON(_ message: String) -> APIError { APIError(.invalidJSON, message) }
    /// Valid JSON with the wrong fields.
    static func invalidBody(_ message: String) -> APIError { APIError(.invalidBody, message) }
    static func unknownPlatform(_ text: String) -> APIError {
        APIError(.unknownPlatform, "platform must be 'ios', 'android' or 'webpush', not '\(text.prefix(32))'")
    }
    static let invalidIdempotencyKey = APIError(
        .invalidIdempotencyKey, "Idempotency-Key must be 1 to 255 bytes"
    )
    /// The same `Idempotency-Key` with another body: never answered with the earlier job, so
    /// whoever plants a key cannot hand the real caller their job.
    static let idempotencyKeyReused = APIError(
        .idempotencyKeyReused, "this Idempotency-Key was used for another body; a retry sends the same body, anything else takes a new key")
    /// No provider serves the platform (for the app): nothing sent to it could arrive.
    static func platformNotConfigured(_ platform: Platform, app: String) -> APIError {
        APIError(
            .platformNotConfigured,
            "no push provider is configured for \(platform.rawValue)" + (app == PushTarget.defaultApp ? "" : " in app '\(app)'"))
    }
    static let shuttingDown = APIError(.shuttingDown, "the server is shutting down; retry shortly")
    /// The database failed (I/O, full disk, a lock held too long): nothing was done, and a retry
    /// in a moment can succeed, so 503 with `Retry-After` rather than a 500.
    static func storeUnavailable(_ message: String = "the database is unavailable; retry") -> APIError {
        APIError(.storeUnavailable, message, headers: [.retryAfter: "1"])
    }

    /// A module's refusal (a push its provider refuses, a registration the gateway does not
    /// take …), answered in its own code and words.
    init(_ error: some ErrorCodeProviding) {
        self.init(error.code, error.message)
    }

    /// The push target has had its share of pushes (``ServerSettings/targetPushesPerMinute``).
    static func targetRateLimited(retryAfter wait: Duration) -> APIError {
        APIError(
            .targetRateLimited, "too many pushes to this device; retry later",
            headers: [.retryAfter: "\(max(1, Int(wait.timeInterval.rounded(.up))))"]
        )
    }

    /// More work waits in memory than the server's caps allow (jobs for the writer, held requests).
    static let overloaded = APIError(
        .overloaded, "the server has too much work waiting; retry shortly", headers: [.retryAfter: "1"]
    )

    /// A job ``OutboxIntake`` did not take: 503 whatever the reason, as a retry (later, or
    /// elsewhere when shutting down) can succeed.
    init(intakeFailure error: any Error) {
        switch error {
        case is OutboxIntake.Unavailable: self = .shuttingDown
        case is OutboxIntake.Overloaded: self = .overloaded
        default: self = .storeUnavailable("the event could not be stored; retry")
        }
    }
}

/// JSON responses in Herald's one encoding.
enum JSONResponse {
    static func make<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try WireJSONEncoding.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}

typealias WireJSONEncoding = WireJSON

/// Turns every error that escapes a route into the JSON error shape, so a client never sees an
/// empty 500 or an HTML page: unknown routes, body limits, and bugs alike.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as RefusedForm {
            throw error  // the dashboard's HTML refusal
        } catch let error as any ErrorCodeProviding {
            throw APIError(error)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw APIError(.bodyTooLarge, "the request body is over the limit")
        } catch let error as HTTPParserError {
            // A body NIO could not parse (a chunk size of -5, a stream cut short): the client's fault.
            throw APIError(.malformedRequest, "the request is not valid HTTP/1.1: \(error)", headers: [.connection: "close"])
        } catch is RequestReadTimeout {
            throw APIError(.requestTimeout, "the request was not received in time", headers: [.connection: "close"])
        } catch let error as StoreError {
            context.logger.error("store failure", metadata: ["error": "\(error)"])
            throw APIError.storeUnavailable()
        } catch let error as HTTPError {
            throw APIError(Self.code(for: error.status), error.body ?? error.status.reasonPhrase)
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.internalError, "the server failed to handle the request")
        }
    }

    /// The framework's own refusals (no such route, a body over the limit …), in our codes.
    static func code(for status: HTTPResponse.Status) -> ErrorCode {
        switch status {
        case .notFound: .notFound
        case .contentTooLarge: .bodyTooLarge
        case .requestTimeout: .requestTimeout
        default: status.code >= 500 ? .internalError : .badRequest
        }
    }
}
