import Configuration
import Foundation

/// A capability's own settings: its rows of the settings table and how they are read, kept in
/// its room beside the code that uses them, so a new setting is written in one place (and
/// listed once in ``ServerSettings/rooms``).
protocol RoomSettings: Sendable {
    /// The key prefix the room's settings share (`bip353`); nil for top-level keys.
    static var scope: String? { get }
    /// The room's rows of ``HeraldConfiguration/settings``, keys within ``scope``, in
    /// docs/configuration.md's order.
    static var descriptions: [SettingDescription] { get }
    /// Reads the room's settings from a reader scoped to ``scope``; nil leaves the capability
    /// off (a room that is always on declares a plain `init(reader:)`).
    init?(reader: SettingsReader) throws
}

extension RoomSettings {
    static var scope: String? { nil }

    /// ``descriptions`` with their keys in full (`bip353.server`), as the table lists them.
    static var rows: [SettingDescription] {
        guard let scope else { return descriptions }
        return descriptions.map { description in
            var row = description
            row.key = "\(scope).\(description.key)"
            return row
        }
    }
}

/// A room's settings type and the ``ServerSettings`` property that keeps them: one line in
/// ``ServerSettings/rooms`` lists a room's rows in the table and reads them.
struct RoomBinding: Sendable {
    let room: any RoomSettings.Type
    let read: @Sendable (inout ServerSettings, SettingsReader) throws -> Void

    init<Room: RoomSettings>(_ property: any WritableKeyPath<ServerSettings, Room> & Sendable) {
        room = Room.self
        read = { settings, reader in
            if let value = try Room(reader: reader) { settings[keyPath: property] = value }
        }
    }

    /// A room that may be off: nil when its settings say so.
    init<Room: RoomSettings>(_ property: any WritableKeyPath<ServerSettings, Room?> & Sendable) {
        room = Room.self
        read = { settings, reader in settings[keyPath: property] = try Room(reader: reader) }
    }
}

/// The settings as one room reads them: its keys below a prefix, read as text and checked one
/// way whichever layer a value came from (a YAML `8080` and an environment "8080" mean, and
/// fail, the same), each error naming that layer's flag, variable or file key.
struct SettingsReader: Sendable {
    private let reader: ConfigReader
    private let prefix: [String]
    /// Where a value came from, by `HERALD_*` variable.
    private let origin: @Sendable (String) -> String
    /// `public_url`, resolved: some rooms derive a default from its host.
    let publicURL: String

    init(reader: ConfigReader, publicURL: String, source: @escaping @Sendable (String) -> String) {
        self.init(reader: reader, prefix: [], publicURL: publicURL, origin: source)
    }

    private init(reader: ConfigReader, prefix: [String], publicURL: String, origin: @escaping @Sendable (String) -> String) {
        self.reader = reader
        self.prefix = prefix
        self.publicURL = publicURL
        self.origin = origin
    }

    /// The reader of a room's settings: below its ``RoomSettings/scope``, if it has one.
    func scoped(for room: any RoomSettings.Type) -> SettingsReader {
        guard let scope = room.scope else { return self }
        let key = ConfigKey(scope)
        return SettingsReader(reader: reader.scoped(to: key), prefix: prefix + key.components, publicURL: publicURL, origin: origin)
    }

    /// The flag, variable or file key the setting `key` (within this reader's prefix) came from.
    func source(_ key: String) -> String {
        origin(SettingDescription((prefix + [key]).joined(separator: "."), default: "", "").environment)
    }

    /// The value, trimmed; nil when unset or blank.
    func text(_ key: String) -> String? {
        guard let value = reader.string(forKey: ConfigKey(key))?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    func int(_ key: String) throws -> Int? {
        try text(key).map { try HeraldConfiguration.positiveInt($0, source: source(key)) }
    }

    func bool(_ key: String) throws -> Bool? {
        try text(key).map { try HeraldConfiguration.bool($0, source: source(key)) }
    }
}
