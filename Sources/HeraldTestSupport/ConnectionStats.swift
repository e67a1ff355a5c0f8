import Foundation

/// How a client used a mock server's connections: how many distinct connections carried
/// requests and how many requests one connection had in flight at once (HTTP/2 streams).
public actor ConnectionStats {
    private var inFlight: [ObjectIdentifier: Int] = [:]
    private var seen: Set<ObjectIdentifier> = []
    private var maxInFlight = 0

    public init() {}

    /// Distinct connections that carried at least one request.
    public var connectionCount: Int { seen.count }
    /// The most requests in flight on one connection at the same time.
    public var maxConcurrentRequestsPerConnection: Int { maxInFlight }

    func begin(_ connection: ObjectIdentifier) {
        seen.insert(connection)
        let now = inFlight[connection, default: 0] + 1
        inFlight[connection] = now
        maxInFlight = max(maxInFlight, now)
    }

    func end(_ connection: ObjectIdentifier) {
        inFlight[connection, default: 1] -= 1
    }
}
