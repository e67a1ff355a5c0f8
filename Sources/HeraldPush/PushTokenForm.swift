import Foundation
import HeraldWire

/// What a push token looks like on each platform, checked one way at every entrance
/// (registration, `PUT`, backend sessions, raw-token webhooks) whatever provider is configured:
/// a token the local development provider takes is one APNs or FCM would take too.
public enum PushTokenForm {
    /// The longest APNs device token taken: 100 bytes in hex (today's are 32).
    public static let maximumAPNsHexDigits = 200

    /// The subscription a `webpush` token holds (registration stored it in this form), checked:
    /// its keys, and an https endpoint unless `allowInsecure`.
    public static func webPushSubscription(_ token: String, allowInsecure: Bool) throws(PushValidationError) -> WebPushSubscription.Checked {
        try checkLength(token)
        guard let subscription = WebPushSubscription(storageToken: token) else {
            throw PushValidationError(.invalidMessage, message: "a Web Push target is a registered subscription, not a token")
        }
        do {
            return try subscription.checked(allowInsecure: allowInsecure)
        } catch {
            throw PushValidationError(.invalidMessage, message: error.message)
        }
    }

    static func checkLength(_ token: String) throws(PushValidationError) {
        guard !token.isEmpty, token.utf8.count <= PushTarget.maximumTokenBytes else {
            throw PushValidationError(.invalidMessage, message: "a push token is 1 to \(PushTarget.maximumTokenBytes) bytes")
        }
    }

    /// The one spelling of a token, taken at every entrance before any allowance, cache, dead
    /// mark or idempotency key sees it: an APNs token's hex in lower case (APNs reads `5A5B…` and
    /// `5a5b…` as one device, so Herald must too). Anything else is returned as given.
    public static func normalized(_ token: String, platform: Platform) -> String {
        guard platform == .ios, !token.allUTF8Bytes({ !(0x41...0x46).contains($0) }), token.allUTF8Bytes(\.isHex) else {
            return token
        }
        return token.lowercased()
    }

    public static func check(_ token: String, platform: Platform) throws(PushValidationError) {
        try checkLength(token)
        try checkForm(token, platform: platform)
    }

    private static func checkForm(_ token: String, platform: Platform) throws(PushValidationError) {
        switch platform {
        case .ios:
            // APNs device tokens are bytes in hex: an even number of hex digits.
            guard token.utf8.count <= maximumAPNsHexDigits, token.utf8.count.isMultiple(of: 2), token.allUTF8Bytes(\.isHex) else {
                throw PushValidationError(
                    .invalidMessage,
                    message: "an APNs device token is an even number of hex digits, at most \(maximumAPNsHexDigits)")
            }
        case .android:
            // FCM registration tokens: letters, digits, '-', '_' and ':'.
            guard token.allUTF8Bytes({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") })
            else {
                throw PushValidationError(.invalidMessage, message: "an FCM registration token is letters, digits, '-', '_' and ':'")
            }
        case .webpush:
            // Whether its endpoint may be used (https, a public address) is the provider's policy.
            _ = try webPushSubscription(token, allowInsecure: true)
        }
    }

    /// A job's token: a device's push token, a relay's URL, a webhook's URL, or a DNS job's usernames.
    public static func check(_ token: String, destination: JobDestination) throws(PushValidationError) {
        try checkLength(token)
        switch destination {
        case .device(let platform):
            try checkForm(token, platform: platform)
        case .nostr:
            guard NostrRelayURL.isValid(token) else {
                throw PushValidationError(.invalidMessage, message: "a Nostr relay is a wss:// URL")
            }
        case .webhook:
            guard let url = URL(string: token), ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false,
                url.user == nil
            else {
                throw PushValidationError(.invalidMessage, message: "a webhook is an http(s) URL with a host")
            }
        case .dns:
            // Usernames (LUD-16's characters), space separated.
            let names = token.split(separator: " ", omittingEmptySubsequences: false)
            guard !names.isEmpty,
                names.allSatisfy({ name in
                    !name.isEmpty
                        && name.utf8.allSatisfy {
                            $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
                        }
                })
            else {
                throw PushValidationError(.invalidMessage, message: "a DNS job names usernames, space separated")
            }
        }
    }
}
