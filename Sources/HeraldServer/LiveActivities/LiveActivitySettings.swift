import HeraldWire

/// What a push that starts a swap's Live Activity says.
public struct LiveActivitySettings: RoomSettings, Hashable {
    /// The name of the app's `ActivityAttributes` type, which the push names
    /// (`live_activity_attributes_type`).
    public var attributesType = LiveActivityAPS.swapAttributesType

    public init() {}

    static var descriptions: [SettingDescription] {
        [
            .init(
                "live_activity_attributes_type", default: LiveActivitySettings().attributesType,
                "The name of the app's ActivityAttributes type that a swap's Live Activity is started with")
        ]
    }

    init(reader: SettingsReader) throws {
        guard let value = reader.text("live_activity_attributes_type") else { return }
        // A Swift type's name: ActivityKit matches it against the app's type.
        guard value.utf8.count <= 128,
            value.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") })
        else {
            throw HeraldConfiguration.Invalid("\(reader.source("live_activity_attributes_type")) must be a Swift type name, not '\(value)'")
        }
        attributesType = value
    }
}
