import Foundation

/// The relays Herald publishes zap receipts to, as a zap request names them: `wss://` with a
/// host, no credentials, at most 512 bytes. One rule for the request's check and the publisher.
public enum NostrRelayURL {
    public static let maximumBytes = 512

    public static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= maximumBytes, let url = URL(string: text), url.scheme?.lowercased() == "wss",
            let host = url.host, !host.isEmpty, url.user == nil
        else { return false }
        return true
    }
}
