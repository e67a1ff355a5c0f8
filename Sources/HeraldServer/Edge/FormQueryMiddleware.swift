import HTTPTypes
import Hummingbird

/// Reads every query string as HTML forms write it (`application/x-www-form-urlencoded`): a `+`
/// is a space, and only `%2B` is a plus. Python's `urlencode`, Java's `URLEncoder` and browsers'
/// `URLSearchParams` all write spaces so; Hummingbird's own reading keeps the `+`, which broke a
/// form-encoded NIP-57 zap request's signature and put "thanks+a+lot" on the phone.
///
/// One middleware in front of every route rewrites each `+` of the query to `%20` before any
/// route reads it, so no route can forget.
struct FormQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let rewritten = Self.rewrite(request.head.path) else { return try await next(request, context) }
        var head = request.head
        head.path = rewritten
        return try await next(Request(head: head, body: request.body), context)
    }

    /// The path with each `+` after its `?` written `%20`; nil when there is none to rewrite.
    static func rewrite(_ path: String?) -> String? {
        guard let path, let query = path.utf8.firstIndex(of: UInt8(ascii: "?")),
            path.utf8[query...].contains(UInt8(ascii: "+"))
        else { return nil }
        var bytes = Array(path.utf8[..<query])
        for byte in path.utf8[query...] {
            if byte == UInt8(ascii: "+") { bytes += Array("%20".utf8) } else { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
