import Foundation
import HeraldWire

/// One change to presence state, as one instance tells the others on a shared database
/// (``PresenceMirror``): every instance applies every change, so a heartbeat, a held stream or
/// a wake seen by one is known to all. Small on purpose: a `NOTIFY` payload holds 8000 bytes.
struct PresenceChange: Codable, Sendable, Hashable {
    enum Kind: String, Codable, Sendable {
        /// Present through heartbeats until `until`.
        case heartbeat
        /// Went to the background.
        case leave
        /// `origin` holds a stream for the device; present until `until` unless renewed.
        case streamHeld = "stream_held"
        /// `origin` holds no stream for the device any more.
        case streamClosed = "stream_closed"
        /// A wake was pushed at `at`.
        case woke
        /// A wake for a device present through a stream held elsewhere: its holder tells it.
        case deliver
    }

    var kind: Kind
    /// The instance that made the change (its own changes come back to it, and are skipped).
    var origin: String
    var device: String
    var until: Date?
    var at: Date?
    var event: PresenceWakeEvent?
}
