import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Presence over `URLSession`, on Apple platforms and on Linux (FoundationNetworking).
///
/// The stream uses a delegate-based data task rather than `bytes(for:)`: the async byte sequence
/// does not exist in Linux's FoundationNetworking, the delegate callbacks exist everywhere.
public struct URLSessionPresenceTransport: PresenceTransport {
    let session: URLSession

    /// A transport on an ephemeral session that keeps no cookies or cache on disk.
    public init() {
        self.session = URLSession(configuration: Self.ephemeral())
    }

    public init(session: URLSession) { self.session = session }

    static func ephemeral() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return configuration
    }

    public func send(_ request: PresenceHTTPRequest, timeout: Duration) async throws -> PresenceHTTPResponse {
        let (data, response) = try await session.data(for: Self.urlRequest(request, timeout: timeout))
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return PresenceHTTPResponse(status: http.statusCode, body: data)
    }

    public func stream(_ request: PresenceHTTPRequest, idleTimeout: Duration) -> AsyncThrowingStream<PresenceStreamPart, any Error> {
        // Unbounded is safe here: the reporter parses each chunk as it comes, so nothing piles up,
        // and dropping bytes would corrupt the event stream.
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: PresenceStreamPart.self, bufferingPolicy: .unbounded)
        let delegate = StreamDelegate(continuation: continuation)
        // A session per stream: the delegate belongs to the session, and invalidating it when the
        // stream ends releases the delegate (URLSession holds it strongly until then).
        let configuration = Self.ephemeral()
        configuration.timeoutIntervalForRequest = Self.seconds(idleTimeout)
        let streamSession = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        var urlRequest = Self.urlRequest(request, timeout: idleTimeout)
        urlRequest.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        urlRequest.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        let task = streamSession.dataTask(with: urlRequest)
        continuation.onTermination = { _ in
            task.cancel()
            streamSession.invalidateAndCancel()
        }
        task.resume()
        return stream
    }

    static func urlRequest(_ request: PresenceHTTPRequest, timeout: Duration) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = seconds(timeout)
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        return urlRequest
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        max(0.1, Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}

/// Forwards a data task's callbacks into the stream. Its only state is the continuation, which is
/// itself safe to use from URLSession's delegate queue.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let continuation: AsyncThrowingStream<PresenceStreamPart, any Error>.Continuation

    init(continuation: AsyncThrowingStream<PresenceStreamPart, any Error>.Continuation) {
        self.continuation = continuation
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        continuation.yield(.status((response as? HTTPURLResponse)?.statusCode ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            continuation.finish(throwing: error)
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
