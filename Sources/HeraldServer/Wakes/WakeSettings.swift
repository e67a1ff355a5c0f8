import HeraldWire

/// How wakes of an iPhone show their alert, for wakes that do not say.
public struct WakeSettings: RoomSettings, Hashable {
    /// When a wake's alert shows (`wake_alert`).
    public var alert = WakeAlert.always
    /// Seconds after a `fallback` wake before its alert, unless acknowledged `handled`
    /// (`wake_fallback_after`).
    public var fallbackAfter = 4
    /// Seconds a fallback alert waits, from a `received` ack, for the app to ack `handled`
    /// (`wake_fallback_grace`): a silently woken app needs a few seconds to start its node.
    public var fallbackGrace = 10

    public init() {}

    static var descriptions: [SettingDescription] {
        let defaults = WakeSettings()
        return [
            .init(
                "wake_alert", default: defaults.alert.rawValue,
                "When a wake of an iPhone shows its alert: always (with the silent push) or fallback (only if not acknowledged handled in time)"),
            .init(
                "wake_fallback_after", default: String(defaults.fallbackAfter),
                "Seconds a fallback wake waits for the device's handled ack before its alert"),
            .init(
                "wake_fallback_grace", default: String(defaults.fallbackGrace),
                "Seconds a fallback alert waits, from the device's received ack, for its handled ack"),
        ]
    }

    init(reader: SettingsReader) throws {
        if let value = reader.text("wake_alert") {
            guard let alert = WakeAlert(rawValue: value.lowercased()) else {
                throw HeraldConfiguration.Invalid("\(reader.source("wake_alert")) must be always or fallback, not '\(value)'")
            }
            self.alert = alert
        }
        if let value = try Self.seconds("wake_fallback_after", reader) { fallbackAfter = value }
        if let value = try Self.seconds("wake_fallback_grace", reader) { fallbackGrace = value }
    }

    /// Seconds within what a wake may ask for itself (`fallback_after_secs`).
    private static func seconds(_ key: String, _ reader: SettingsReader) throws -> Int? {
        guard let value = try reader.int(key) else { return nil }
        guard value <= WakeRoutes.maxFallbackAfterSecs else {
            throw HeraldConfiguration.Invalid("\(reader.source(key)) must be 1 to \(WakeRoutes.maxFallbackAfterSecs) seconds, not \(value)")
        }
        return value
    }
}
