/// How far one identity's proof reaches.
public struct IdentitySettings: RoomSettings, Hashable {
    /// Devices one identity may be proven on (`identity_devices_max`): a push to the identity
    /// goes to each, so one proof must not fan a producer's call out to any number of tokens.
    public var devicesMax = 10

    public init() {}

    static var descriptions: [SettingDescription] {
        [
            .init(
                "identity_devices_max", default: String(IdentitySettings().devicesMax),
                "Devices one identity (ln: or pk:) may be proven on; one more is 409 too_many_devices until one is deleted")
        ]
    }

    init(reader: SettingsReader) throws {
        if let value = try reader.int("identity_devices_max") { devicesMax = value }
    }
}
