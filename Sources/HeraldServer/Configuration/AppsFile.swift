import Configuration
import Foundation
import HeraldPush

/// The configuration file's `apps` section: several apps in one deployment, each a named set of
/// credentials. The name is what devices register with (`"app": "com.example.wallet"`).
///
/// ```yaml
/// apps:
///   com.example.wallet:
///     apns: { key_file: /etc/herald/AuthKey_ABC.p8, key_id: ABC, team_id: TEAM, topic: com.example.wallet }
///     fcm: { service_account_file: /etc/herald/wallet.json }
///   com.example.wallet.beta:
///     apns: { key_file: /etc/herald/AuthKey_ABC.p8, key_id: ABC, team_id: TEAM, topic: com.example.wallet.beta, environment: sandbox }
/// ```
///
/// Only the names are read here; each app's settings are read by the configuration's one
/// reader, under `apps.<name>.`, and checked as the default app's are.
enum AppsFile {
    /// The names under `apps` (none without a file or the section).
    static func names(in parsed: ConfigurationFile?) throws -> [String] {
        guard let parsed, let section = parsed.document["apps"] else { return [] }
        let file = parsed.path
        guard let apps = section as? [String: Any] else {
            throw HeraldConfiguration.Invalid("\(file): the apps section is not valid: a map of app names is expected")
        }
        for (name, entry) in apps {
            guard isValidName(name) else {
                throw HeraldConfiguration.Invalid(
                    "\(file): app name '\(name.prefix(64))' must be 1 to 64 letters, digits, '.', '-' or '_'")
            }
            guard entry is [String: Any] else {
                throw HeraldConfiguration.Invalid("\(file): the apps section is not valid: app '\(name)' is not a map")
            }
        }
        return apps.keys.sorted()
    }

    /// App `name`'s credentials, through `reader`.
    static func app(_ name: String, file: String, reader: ConfigReader) throws -> ProviderSettings.App {
        func key(_ relative: String) -> String { "apps.\(name).\(relative)" }
        func value(_ relative: String) -> String? {
            let components = ["apps", name] + relative.split(separator: ".").map(String.init)
            guard let text = reader.string(forKey: ConfigKey(components))?.trimmingCharacters(in: .whitespaces), !text.isEmpty
            else { return nil }
            return text
        }
        let present = ProviderSettings.appKeys.filter { value($0) != nil }
        guard !present.isEmpty else {
            throw HeraldConfiguration.Invalid("\(file): app '\(name)' has neither apns nor fcm credentials")
        }
        if present.contains(where: { $0.hasPrefix("apns.") }),
            let missing = ProviderSettings.apnsRequired.first(where: { value($0) == nil })
        {
            throw HeraldConfiguration.Invalid("\(file): the apps section is not valid: missing \(key(missing))")
        }
        do {
            return try ProviderSettings.App(reading: value, naming: key)
        } catch {
            throw HeraldConfiguration.Invalid("\(file): app '\(name)': \(error)")
        }
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}
