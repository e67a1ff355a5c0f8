import Foundation

/// One BIP-353 name as Herald wants it in DNS: the TXT record's text while a device holds it,
/// nil once it must be gone. Rows outlive their device on purpose: a deleted device's record
/// must still be removed from the zone.
public struct Bip353Record: Sendable, Hashable {
    /// The username: the record is `<name>.user.<zone>`.
    public var name: String
    public var deviceID: String?
    /// `bitcoin:?lno=…`; nil: the record is to be removed.
    public var uri: String?
    /// The TTL to publish it with, in seconds.
    public var ttl: Int
    /// The outbox job that last carried a change of this name.
    public var jobID: String?

    public init(name: String, deviceID: String?, uri: String?, ttl: Int, jobID: String?) {
        self.name = name
        self.deviceID = deviceID
        self.uri = uri
        self.ttl = ttl
        self.jobID = jobID
    }
}

/// The BIP-353 records Herald publishes, as it wants them: the outbox's DNS jobs read them when
/// they are sent, so a job sent late or twice still writes the latest state, never an older one.
public protocol Bip353Store: Sendable {
    /// Writes these names' wanted state, each with `jobID`, the job that will publish them.
    func putBip353Records(_ records: [Bip353Record]) async throws
    /// The wanted state of these names (names never written are absent from the answer).
    func bip353Records(names: [String]) async throws -> [Bip353Record]
    /// The record a device holds, if any.
    func bip353Record(deviceID: String) async throws -> Bip353Record?
}
