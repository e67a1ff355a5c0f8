import Foundation
import HTTPTypes
import HeraldStore
import Hummingbird
import NIOCore

/// `POST /api/v1/reply/{id}`: where a woken device answers the request it was pushed.
///
/// `200` taken, `409` answered before, `404` unknown (or long forgotten), `410` expired,
/// `413` over the size cap, `400` not a JSON object. The device's `Cache-Control: max-age`
/// travels with the answer.
struct ReplyRoutes: Sendable {
    let relay: ReplyRelay
    let settings: ServerSettings

    func register(on router: some RouterMethods<HeraldRequestContext>) {
        router.post("reply/:id") { request, context in try await reply(request, context: context) }
    }

    func reply(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.utf8.count <= 64 else {
            throw APIError(.unknownReply, "no request is waiting on this reply URL")
        }
        var request = request
        let body = try await Edge.readRequiredBody(
            &request, limit: settings.replyBodyLimit,
            tooLarge: APIError(.replyTooLarge, "the reply is over \(settings.replyBodyLimit) bytes")
        )
        let data = Data(buffer: body)
        _ = try Edge.parseJSONObject(data)
        let answer = ReplyAnswer(body: data, cacheMaxAge: Self.maxAge(request.headers[.cacheControl]))
        switch try await relay.deliver(id: id, answer: answer) {
        case .accepted:
            return try JSONResponse.make(["status": "accepted"])
        case .alreadyAnswered:
            throw APIError(.alreadyAnswered, "this request was answered already")
        case .expired:
            throw APIError(.replyExpired, "the caller stopped waiting for this answer")
        case .unknown:
            throw APIError(.unknownReply, "no request is waiting on this reply URL")
        }
    }

    /// `max-age` of a `Cache-Control` value; `nil` when absent, zero, or the answer must not be stored.
    static func maxAge(_ header: String?) -> Int? {
        guard let header else { return nil }
        var maxAge: Int?
        for directive in header.lowercased().split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            switch parts.first {
            case "no-store", "no-cache": return nil
            case "max-age":
                guard parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: .init(charactersIn: "\" ")))
                else { return nil }
                maxAge = seconds
            default: continue
            }
        }
        guard let maxAge, maxAge > 0 else { return nil }
        return maxAge
    }
}

extension ReplyAnswer {
    /// The device's answer to the caller as it came, byte for byte (LNURL metadata depends on it).
    func response() -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let cacheMaxAge { headers[.cacheControl] = "max-age=\(cacheMaxAge)" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
