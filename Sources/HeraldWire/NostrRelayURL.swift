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

    /// The one spelling of a relay a registration names, so one relay is one connection however
    /// it is written: scheme and host in lower case, no user info, no fragment, the default port
    /// (443) and a trailing `/` dropped. nil when it is not a `wss://` URL with a host.
    public static func normalized(_ text: String) -> String? {
        guard text.utf8.count <= maximumBytes, let components = URLComponents(string: text),
            components.scheme?.lowercased() == "wss", let host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { return nil }
        var url = "wss://" + host
        if let port = components.port, port != 443 { url += ":\(port)" }
        var path = Substring(components.percentEncodedPath)
        while path.hasSuffix("/") { path = path.dropLast() }
        url += path
        if let query = components.percentEncodedQuery { url += "?" + query }
        return isValid(url) ? url : nil
    }

    /// The host of a normalized relay URL.
    public static func host(_ normalized: String) -> String {
        URLComponents(string: normalized)?.percentEncodedHost ?? normalized
    }
}
