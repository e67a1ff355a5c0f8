/// The push service a device is reached through.
public enum Platform: String, Codable, Sendable, CaseIterable {
    /// Apple Push Notification service.
    case ios
    /// Firebase Cloud Messaging.
    case android
    /// Web Push (RFC 8030/8291/8292): UnifiedPush distributors on phones without Google's
    /// services, and browsers. The device's "token" is its subscription
    /// (``WebPushSubscription/storageToken``), and it is reached only through a registered alias.
    case webpush
    /// Not a device's: Nostr relays, where the outbox publishes zap receipts (NIP-57) with the
    /// same retries, expiry, metrics and dead letters as pushes. A job's "token" is the relay URL.
    case nostr
    /// Not a device's: an HTTP endpoint the outbox POSTs a JSON body to (an NWC request forwarded
    /// to another notification service), with the same retries and dead letters. A job's
    /// "token" is the URL.
    case webhook
    /// Not a device's: BIP-353 records, written to a DNS server by RFC 2136 UPDATE with the same
    /// retries and dead letters. A job's "token" is the usernames whose records it writes, space
    /// separated; the records' contents are read when it is sent.
    case dns

    /// The platforms a device registers with; `nostr` and `webhook` are the outbox's own.
    public static let devicePlatforms: [Platform] = [.ios, .android, .webpush]
}
