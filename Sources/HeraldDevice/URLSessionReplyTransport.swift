import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Replies through `URLSession`: the natural transport on iOS and Android's Swift SDK.
public struct URLSessionReplyTransport: ReplyTransport {
    let session: URLSession

    /// A transport on an ephemeral session that keeps no cookies or cache on disk.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    public init(session: URLSession) { self.session = session }

    public func post(_ request: ReplyRequest, timeout: Duration) async throws -> Int {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw InvalidReplyURL(url: request.url)
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = "POST"
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = max(0.1, Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let (_, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return http.statusCode
    }
}
