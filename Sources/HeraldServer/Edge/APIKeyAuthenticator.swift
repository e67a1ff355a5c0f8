import HTTPTypes
import HeraldStore
import Hummingbird

/// Lets a request through only with `Authorization: Bearer <API key>` naming a live key that
/// has `scope`: a missing, unknown or revoked key is `401`, a key without the scope `403`.
///
/// Added to a router group, it guards exactly the routes registered through that group.
struct APIKeyAuthenticator: RouterMiddleware {
    typealias Context = HeraldRequestContext

    let keys: any APIKeyStore
    let scope: APIScope

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        try await Self.check(request.headers, keys: keys, scope: scope)
        return try await next(request, context)
    }

    /// The check itself, for a route that needs a key only in some configurations
    /// (`registration: key`): `401` without a live key, `403` without the scope.
    static func check(_ headers: HTTPFields, keys: any APIKeyStore, scope: APIScope) async throws {
        guard let secret = Edge.bearerCredential(headers) else {
            throw APIError.unauthorized(
                "send an API key of scope '\(scope.rawValue)' as 'Authorization: Bearer <key>' (create one with `herald keys create --scopes \(scope.rawValue)`)"
            )
        }
        guard let key = try await keys.apiKey(secret: secret), !key.isRevoked else {
            // One answer for unknown and revoked keys: a caller learns nothing about which keys exist.
            throw APIError.unauthorized("unknown or revoked API key")
        }
        guard key.allows(scope) else {
            throw APIError(
                .forbidden, "the API key '\(key.name)' lacks the '\(scope.rawValue)' scope",
                headers: [.wwwAuthenticate: "Bearer error=\"insufficient_scope\", scope=\"\(scope.rawValue)\""]
            )
        }
    }
}
