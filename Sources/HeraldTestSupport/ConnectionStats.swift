import Foundation
import NIOCore

/// How a client used a mock server's connections: how many distinct connections carried
/// requests and how many requests one connection had in flight at once (HTTP/2 streams).
public actor ConnectionStats {
    private var inFlight: [ObjectIdentifier: Int] = [:]
    // Holding the channels keeps their identities from being reused by later connections.
    private var seen: [ObjectIdentifier: any Channel] = [:]
    private var maxInFlight = 0
    private var numbers: [ObjectIdentifier: Int] = [:]

    public init() {}

    /// Distinct connections that carried at least one request.
    public var connectionCount: Int { seen.count }
    /// The most requests in flight on one connection at the same time.
    public var maxConcurrentRequestsPerConnection: Int { maxInFlight }

    /// A number per connection, 1, 2, … in order of first use.
    func number(of connection: ObjectIdentifier) -> Int {
        numbers[connection] ?? 0
    }

    func begin(_ connection: ObjectIdentifier, channel: any Channel) {
        if seen[connection] == nil {
            seen[connection] = channel
            numbers[connection] = numbers.count + 1
        }
        let now = inFlight[connection, default: 0] + 1
        inFlight[connection] = now
        maxInFlight = max(maxInFlight, now)
    }

    func end(_ connection: ObjectIdentifier) {
        inFlight[connection, default: 1] -= 1
    }

    /// Counts one request on `context`'s connection while `body` runs; `body` gets the
    /// connection's number.
    nonisolated func tracking<T: Sendable>(
        _ context: MockRequestContext,
        _ body: (_ connection: Int) async throws -> T
    ) async throws -> T {
        await begin(context.connectionID, channel: context.connection)
        let number = await number(of: context.connectionID)
        do {
            let value = try await body(number)
            await end(context.connectionID)
            return value
        } catch {
            await end(context.connectionID)
            throw error
        }
    }
}
