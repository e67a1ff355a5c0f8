/// A visible push in WebKit's declarative Web Push form, the plaintext Herald encrypts for a
/// subscription that asked for it:
/// `{"mutable": true, "notification": {"body", "data", "navigate", "tag", "title"}, "web_push": 8030}`.
///
/// The browser shows the notification itself, with no service worker, so the lock screen gets
/// the text even when no JavaScript runs; `mutable` lets a service worker that does run rewrite
/// it (the plugin's localised text, as an iOS extension rewrites an alert). Browsers without the
/// declarative form hand the same JSON to the service worker's `push` event.
public struct DeclarativeWebPushMessage: Codable, Sendable, Hashable {
    /// The value of `web_push` that marks the declarative form: the number of the Web Push RFC.
    public static let marker = 8030

    /// Always ``marker``; decoded as it came, so a reader can tell the form from another object.
    public var webPush: Int
    public var notification: Notification
    /// Whether a service worker may change the notification before it is shown.
    public var mutable: Bool

    public struct Notification: Codable, Sendable, Hashable {
        public var title: String
        public var body: String
        /// The https URL a tap opens.
        public var navigate: String
        /// A newer notification with the same tag replaces the older one instead of stacking.
        public var tag: String?
        /// The push's data map, as the plain form carries it.
        public var data: [String: String]

        public init(title: String, body: String, navigate: String, tag: String?, data: [String: String]) {
            self.title = title
            self.body = body
            self.navigate = navigate
            self.tag = tag
            self.data = data
        }
    }

    public init(notification: Notification, mutable: Bool = true) {
        self.webPush = Self.marker
        self.notification = notification
        self.mutable = mutable
    }

    enum CodingKeys: String, CodingKey {
        case webPush = "web_push"
        case notification, mutable
    }
}
