import Foundation

/// Sends one HTTP POST. Kept behind a protocol so the core does not pull in an HTTP stack
/// (URLSession costs memory on Linux) and tests can count attempts.
public protocol ReplyTransport: Sendable {
    /// POSTs the request and returns the response status; throws on a network failure or timeout.
    func post(_ request: ReplyRequest, timeout: Duration) async throws -> Int
}

/// One reply POST.
public struct ReplyRequest: Sendable, Hashable {
    public var url: String
    public var body: Data
    /// Header name → value (`Content-Type`, `Cache-Control`).
    public var headers: [String: String]

    public init(url: String, body: Data, headers: [String: String]) {
        self.url = url
        self.body = body
        self.headers = headers
    }
}

/// A reply URL that is not an absolute http(s) URL.
public struct InvalidReplyURL: Error, Sendable, Hashable {
    public var url: String
    public init(url: String) { self.url = url }
}
