import Foundation
import NIOCore

/// How a client used a mock server's connections: how many distinct connections carried
/// requests and how many requests one connection had in flight at once (HTTP/2 streams).
public actor ConnectionStats {
    private var inFlight: [ObjectIdentifier: Int] = [:]
    // Holding the channels keeps their identities from being reused by later connections.
    private var seen: [ObjectIdentifier: any Channel] = [:]
    private var maxInFlight = 0

    public init() {}

    /// Distinct connections that carried at least one request.
    public var connectionCount: Int { seen.count }
    /// The most requests in flight on one connection at the same time.
    public var maxConcurrentRequestsPerConnection: Int { maxInFlight }

    func begin(_ connection: ObjectIdentifier, channel: any Channel) {
        seen[connection] = channel
        let now = inFlight[connection, default: 0] + 1
        inFlight[connection] = now
        maxInFlight = max(maxInFlight, now)
    }

    func end(_ connection: ObjectIdentifier) {
        inFlight[connection, default: 1] -= 1
    }
}
