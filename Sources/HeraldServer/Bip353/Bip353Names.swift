import Foundation
import HeraldBolt12
import HeraldDNS
import HeraldPush
import HeraldStore
import HeraldWire

/// A device's BIP-353 name (`₿alice@domain`, a TXT record `bitcoin:?lno=<offer>` at
/// `alice.user.<zone>`) kept as its Lightning address changes: claimed with an offer, replaced by
/// another offer, renamed, released, or its device deleted. Each change is written to the store
/// and committed as one outbox job to the DNS server, so it survives a restart and is retried
/// while the server is away.
struct Bip353Names: Sendable {
    let settings: Bip353Settings
    let store: any Bip353Store & OutboxStore
    let delivery: PushDelivery
    let now: @Sendable () -> Date

    /// How long a DNS change is worth retrying: a server away for days still gets it.
    static let jobTTL: TimeInterval = 7 * 86400

    /// What an offer's `bitcoin:` URI starts with.
    static let uriPrefix = "bitcoin:?lno="

    /// The `bitcoin:` URI of an offer, checked: BOLT 12's encoding, and a size one DNS message
    /// holds.
    static func uri(offer text: String) throws -> String {
        let offer: Bolt12Offer
        do {
            offer = try Bolt12Offer(text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw APIError(.invalidOffer, "offer is not a valid BOLT 12 offer: \(error)")
        }
        let uri = uriPrefix + offer.encoded
        guard uri.utf8.count <= TXTRecord.maximumTextLength else {
            throw APIError(.offerTooLong, "the bitcoin: URI is \(uri.utf8.count) bytes; one DNS record holds \(TXTRecord.maximumTextLength)")
        }
        return uri
    }

    /// After a claim of `username` (renaming `previous`, if it was one): the new name carries
    /// `uri` (or, without a new offer, the record the device had), the old one is removed. The
    /// record keeps the configured TTL; the publisher lowers it to what the offer has left when
    /// it writes the record.
    /// Returns the record the device now has, if any.
    func claimed(username: String, previous: String?, deviceID: String, uri: String?) async throws
        -> Bip353Record?
    {
        let held = try await store.bip353Record(deviceID: deviceID)
        var changes: [Bip353Record] = []
        let jobID = JobID.make()
        var now: Bip353Record?
        if let uri {
            now = Bip353Record(name: username, deviceID: deviceID, uri: uri, ttl: settings.ttl, jobID: jobID)
        } else if let held, held.name != username {
            now = Bip353Record(name: username, deviceID: deviceID, uri: held.uri, ttl: held.ttl, jobID: jobID)
        }
        if let now { changes.append(now) }
        // The name the device leaves, or held before under another name: removed in the same UPDATE.
        for old in Set([previous, held?.name].compactMap { $0 }) where old != username {
            changes.append(Bip353Record(name: old, deviceID: nil, uri: nil, ttl: 0, jobID: jobID))
        }
        guard !changes.isEmpty else { return held }
        try await write(changes, jobID: jobID)
        return now ?? held
    }

    /// The device's name is released, or the device deleted: its record is removed.
    func released(deviceID: String) async throws {
        guard let held = try await store.bip353Record(deviceID: deviceID) else { return }
        let jobID = JobID.make()
        try await write([Bip353Record(name: held.name, deviceID: nil, uri: nil, ttl: 0, jobID: jobID)], jobID: jobID)
    }

    /// Records first, then the job that publishes them (which reads them when it is sent).
    private func write(_ changes: [Bip353Record], jobID: String) async throws {
        try await store.putBip353Records(changes)
        var recipient = PushDelivery.Recipient(
            target: PushTarget(destination: .dns, token: changes.map(\.name).joined(separator: " "), app: PushTarget.defaultApp))
        recipient.jobID = jobID
        let message = PushMessage(kind: .background, data: [:], expiresAt: now().addingTimeInterval(Self.jobTTL))
        _ = try await delivery.submit(message, type: "bip353", to: [recipient], metric: nil, chargesAllowance: false)
    }

    /// What became of the device's record: `published`, `pending`, or `failed: <RCODE>`.
    func state(of record: Bip353Record) async throws -> String {
        guard let jobID = record.jobID, let status = try await store.status(jobID: jobID) else { return "pending" }
        switch status.state {
        case .pending: return "pending"
        case .delivered: return "published"
        case .dead: return "failed: " + (status.lastError?.split(separator: " ").last.map(String.init) ?? "unknown")
        }
    }
}
