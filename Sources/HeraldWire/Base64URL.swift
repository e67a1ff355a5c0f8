import Foundation

extension Data {
    /// Decodes base64url (RFC 4648 §5) with or without padding, and plain base64 too: Web Push
    /// keys, seal keys and cursors come in either form.
    public init?(base64URL text: some StringProtocol) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    /// Base64url without padding, as Web Push, JWTs and cursors write it.
    public var base64URLEncodedString: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
