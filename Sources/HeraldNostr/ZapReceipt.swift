import Foundation

/// A NIP-57 zap receipt (kind 9735, Appendix E): what Herald publishes once the phone says the
/// zap's invoice is paid.
public enum ZapReceipt {
    public static let kind = 9735

    /// The receipt for `request`, paid by `bolt11` with `preimage` (hex) at `paidAt`, signed by
    /// Herald's key: tags `p`, `e` / `a` and `P` (the request's author) from the request,
    /// `bolt11`, `description` (the request as received) and `preimage`; empty content.
    public static func make(for request: ZapRequest, bolt11: String, preimage: String, paidAt: Date, key: NostrSecretKey) -> NostrEvent {
        var tags: [[String]] = [["p", request.recipient]]
        if let id = request.eventID { tags.append(["e", id]) }
        if let coordinate = request.coordinate { tags.append(["a", coordinate]) }
        tags.append(["P", request.event.pubkey])
        tags.append(["bolt11", bolt11])
        tags.append(["description", request.json])
        tags.append(["preimage", preimage])
        return NostrEvent.signed(
            kind: kind, tags: tags, content: "", createdAt: Int64(paidAt.timeIntervalSince1970.rounded(.down)), by: key)
    }
}
