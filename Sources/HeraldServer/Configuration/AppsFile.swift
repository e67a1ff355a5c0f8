import Foundation
import HeraldPush
import Yams

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
struct AppsFile: Decodable {
    struct Entry: Decodable {
        var apns: APNs?
        var fcm: FCM?
    }

    struct APNs: Decodable {
        var keyFile: String
        var keyID: String
        var teamID: String
        var topic: String
        var environment: String?
        var url: String?

        enum CodingKeys: String, CodingKey {
            case keyFile = "key_file", keyID = "key_id", teamID = "team_id", topic, environment, url
        }
    }

    struct FCM: Decodable {
        var serviceAccountFile: String
        var url: String?

        enum CodingKeys: String, CodingKey {
            case serviceAccountFile = "service_account_file", url
        }
    }

    var apps: [String: Entry]?

    /// The apps a YAML file declares (none when it has no `apps` section), checked as the
    /// environment's single app is: every file readable, every key parsed.
    static func read(_ contents: String, file: String) throws -> [String: ProviderSettings.App] {
        let decoded: AppsFile?
        do {
            decoded = try YAMLDecoder().decode(AppsFile?.self, from: contents)
        } catch {
            throw HeraldConfiguration.Invalid("\(file): the apps section is not valid: \(Self.describe(error))")
        }
        var apps: [String: ProviderSettings.App] = [:]
        for (name, entry) in decoded?.apps ?? [:] {
            guard Self.isValidName(name) else {
                throw HeraldConfiguration.Invalid(
                    "\(file): app name '\(name.prefix(64))' must be 1 to 64 letters, digits, '.', '-' or '_'")
            }
            guard entry.apns != nil || entry.fcm != nil else {
                throw HeraldConfiguration.Invalid("\(file): app '\(name)' has neither apns nor fcm credentials")
            }
            var variables: [String: String] = [:]
            if let apns = entry.apns {
                variables["HERALD_APNS_KEY_FILE"] = apns.keyFile
                variables["HERALD_APNS_KEY_ID"] = apns.keyID
                variables["HERALD_APNS_TEAM_ID"] = apns.teamID
                variables["HERALD_APNS_TOPIC"] = apns.topic
                variables["HERALD_APNS_ENVIRONMENT"] = apns.environment
                variables["HERALD_APNS_URL"] = apns.url
            }
            if let fcm = entry.fcm {
                variables["HERALD_FCM_SERVICE_ACCOUNT_FILE"] = fcm.serviceAccountFile
                variables["HERALD_FCM_URL"] = fcm.url
            }
            // The same reading and checks as the single app's variables: one way to fail.
            let settings: ProviderSettings
            do {
                settings = try ProviderSettings(environment: variables)
            } catch {
                throw HeraldConfiguration.Invalid("\(file): app '\(name)': \(error)")
            }
            apps[name] = ProviderSettings.App(apns: settings.apns, fcm: settings.fcm)
        }
        return apps
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            "missing \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }
}
