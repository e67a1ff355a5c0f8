import Foundation

/// The HTTP the presence reporter needs: short requests and one long-held event stream. Behind a
/// protocol for the same reason as ``ReplyTransport``: the plugin's core names no HTTP stack.
public protocol PresenceTransport: Sendable {
    /// Sends one request and returns the status and body; throws on a network failure or timeout.
    func send(_ request: PresenceHTTPRequest, timeout: Duration) async throws -> PresenceHTTPResponse

    /// Opens a streamed response: first ``PresenceStreamPart/status(_:)``, then body bytes as they
    /// arrive. The stream finishes when the server ends the response and throws when the connection
    /// breaks or nothing arrives for `idleTimeout`; ending the iteration closes the connection.
    func stream(_ request: PresenceHTTPRequest, idleTimeout: Duration) -> AsyncThrowingStream<PresenceStreamPart, any Error>
}

/// One request of the presence API.
public struct PresenceHTTPRequest: Sendable, Hashable {
    public var method: String
    public var url: URL
    /// Header name → value.
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A complete answer.
public struct PresenceHTTPResponse: Sendable, Hashable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// A piece of a streamed answer.
public enum PresenceStreamPart: Sendable, Hashable {
    /// The response head arrived with this status.
    case status(Int)
    /// Body bytes, cut wherever the network cut them.
    case bytes(Data)
}
