/// Whether a string is a NIP-01 event as relays pass it on: an object with a 32-byte hex `id`
/// and `pubkey`, a 64-byte hex `sig`, integer `created_at` and `kind`, `tags` an array of arrays
/// of strings, and a string `content`.
///
/// The shape only: the webhook forwards the event byte for byte to a wallet that checks the
/// signature itself (breez/notify's `nwc_event`), so a relay's JSON needs no re-serialising here.
public enum NostrEventShape {
    public static func isEvent(_ text: String) -> Bool {
        guard case .object(let event)? = try? JSONParser.parse(Array(text.utf8)) else { return false }
        func hex(_ key: String, bytes: Int) -> Bool {
            guard case .string(let value)? = event[key] else { return false }
            return value.utf8.count == bytes * 2 && value.utf8.allSatisfy(\.isLowerHex)
        }
        func integer(_ key: String) -> Bool {
            if case .int(let value)? = event[key] { return value >= 0 }
            return false
        }
        guard hex("id", bytes: 32), hex("pubkey", bytes: 32), hex("sig", bytes: 64),
            integer("created_at"), integer("kind"),
            case .string? = event["content"], case .array(let tags)? = event["tags"]
        else { return false }
        return tags.allSatisfy { tag in
            guard case .array(let items) = tag else { return false }
            return items.allSatisfy { if case .string = $0 { return true } else { return false } }
        }
    }
}
