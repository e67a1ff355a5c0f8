import Crypto
import Foundation
import HeraldWire
import Testing

/// The subscription object as browsers and UnifiedPush connectors send it, and its checks.
@Suite("Web Push subscriptions")
struct WebPushSubscriptionTests {
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    /// The same point with one bit of y changed: 65 bytes, not on the curve.
    static let offCurve: String = {
        var key = Data(base64URL: p256dh)!
        key[40] ^= 1
        return key.base64URLEncodedString
    }()

    @Test("PushSubscription.toJSON() as a browser gives it decodes and checks")
    func browserJSON() throws {
        let json = """
            {"endpoint":"https://updates.push.services.mozilla.com/wpush/v2/gAAAAABexample","expirationTime":null,\
            "keys":{"auth":"\(Self.auth)","p256dh":"\(Self.p256dh)"}}
            """
        let subscription = try JSONDecoder().decode(WebPushSubscription.self, from: Data(json.utf8))
        let checked = try subscription.checked()
        #expect(checked.endpoint.host == "updates.push.services.mozilla.com")
        #expect(checked.p256dh.count == 65 && checked.p256dh.first == 4)
        #expect(checked.auth == Data(base64URL: Self.auth))
        // A UnifiedPush connector's, without expirationTime and with padded base64.
        let unified = try JSONDecoder().decode(
            WebPushSubscription.self,
            from: Data(#"{"endpoint":"https://ntfy.example.org/upAbC123?up=1","keys":{"p256dh":"\#(Self.p256dh)=","auth":"\#(Self.auth)=="}}"#.utf8))
        #expect(try unified.checked().auth.count == 16)
    }

    @Test(
        "each bad field is refused and named",
        arguments: [
            ("http://push.example/x", p256dh, auth, "endpoint", "https"),
            ("https://user:pw@push.example/x", p256dh, auth, "endpoint", "credentials"),
            ("push.example/x", p256dh, auth, "endpoint", "absolute"),
            ("https://push.example/" + String(repeating: "a", count: 1_000), p256dh, auth, "endpoint", "longer"),
            ("https://push.example/x", String(p256dh.dropLast(4)), auth, "keys.p256dh", "65-byte"),
            ("https://push.example/x", offCurve, auth, "keys.p256dh", "curve"),
            ("https://push.example/x", p256dh, "BTBZMqHH6r4Tts7J_aSI", "keys.auth", "16 bytes"),
        ])
    func refusals(endpoint: String, p256dh: String, auth: String, field: String, words: String) {
        let subscription = WebPushSubscription(endpoint: endpoint, keys: .init(p256dh: p256dh, auth: auth))
        #expect {
            try subscription.checked()
        } throws: { error in
            guard let invalid = error as? WebPushSubscription.Invalid else { return false }
            return invalid.field == field && invalid.message.contains(words)
        }
    }

    @Test("plain http only when the configuration allows it, for local development")
    func insecureAllowed() throws {
        let subscription = WebPushSubscription(endpoint: "http://127.0.0.1:8080/push/1", keys: .init(p256dh: Self.p256dh, auth: Self.auth))
        #expect(throws: WebPushSubscription.Invalid.self) { try subscription.checked() }
        #expect(try subscription.checked(allowInsecure: true).endpoint.port == 8080)
    }

    @Test("the declarative flag rides in the stored token; a plain subscription's token, and a token stored before the flag, are as they were")
    func declarativeStorageToken() throws {
        let keys = WebPushSubscription.Keys(p256dh: Self.p256dh, auth: Self.auth)
        let plain = WebPushSubscription(endpoint: "https://push.example/x", keys: keys, expirationTime: 5)
        #expect(plain.storageToken == #"{"endpoint":"https://push.example/x","keys":{"auth":"\#(Self.auth)","p256dh":"\#(Self.p256dh)"}}"#)
        let declarative = WebPushSubscription(endpoint: "https://push.example/x", keys: keys, declarative: true)
        #expect(
            declarative.storageToken
                == #"{"declarative":true,"endpoint":"https://push.example/x","keys":{"auth":"\#(Self.auth)","p256dh":"\#(Self.p256dh)"}}"#)
        #expect(WebPushSubscription(storageToken: declarative.storageToken) == declarative)
        #expect(try WebPushSubscription(storageToken: declarative.storageToken)?.checked().declarative == true)
        let stored = try #require(WebPushSubscription(storageToken: plain.storageToken))
        #expect(!stored.declarative)
        #expect(try !stored.checked().declarative)
        // The browser's object never carries the flag: a key of that name inside it is not read,
        // and the object a registration shows back has none.
        let object = #"{"endpoint":"https://push.example/x","declarative":true,"keys":{"auth":"\#(Self.auth)","p256dh":"\#(Self.p256dh)"}}"#
        #expect(try !WireJSON.decode(WebPushSubscription.self, from: Data(object.utf8)).declarative)
        #expect(!(try WireJSON.encodeString(declarative)).contains("declarative"))
    }
}
