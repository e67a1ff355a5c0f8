import HeraldWire

/// What a push token looks like on each platform, checked one way at every entrance
/// (registration, `PUT`, backend sessions, raw-token webhooks) whatever provider is configured:
/// a token the local development provider takes is one APNs or FCM would take too.
public enum PushTokenForm {
    /// The longest APNs device token taken: 100 bytes in hex (today's are 32).
    public static let maximumAPNsHexDigits = 200

    public static func check(_ token: String, platform: Platform) throws(PushValidationError) {
        guard !token.isEmpty, token.utf8.count <= PushTarget.maximumTokenBytes else {
            throw PushValidationError(.invalidMessage, message: "a push token is 1 to \(PushTarget.maximumTokenBytes) bytes")
        }
        switch platform {
        case .ios:
            // APNs device tokens are bytes in hex: an even number of hex digits.
            guard token.utf8.count <= maximumAPNsHexDigits, token.utf8.count.isMultiple(of: 2), token.utf8.allSatisfy(\.isHex) else {
                throw PushValidationError(
                    .invalidMessage,
                    message: "an APNs device token is an even number of hex digits, at most \(maximumAPNsHexDigits)")
            }
        case .android:
            // FCM registration tokens: letters, digits, '-', '_' and ':'.
            guard token.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") })
            else {
                throw PushValidationError(.invalidMessage, message: "an FCM registration token is letters, digits, '-', '_' and ':'")
            }
        case .webpush:
            // Registration stored the subscription in this form; whether its endpoint may be
            // used (https, a public address) is the provider's policy, checked there.
            guard let subscription = WebPushSubscription(storageToken: token) else {
                throw PushValidationError(.invalidMessage, message: "a Web Push target is a registered subscription, not a token")
            }
            do {
                _ = try subscription.checked(allowInsecure: true)
            } catch {
                throw PushValidationError(.invalidMessage, message: error.message)
            }
        case .nostr:
            guard NostrRelayProvider.isRelayURL(token) else {
                throw PushValidationError(.invalidMessage, message: "a Nostr relay is a wss:// URL")
            }
        }
    }
}
