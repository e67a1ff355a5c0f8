import Configuration
import Foundation
import Yams

/// The YAML configuration file, read and parsed once: its values for the configuration's one
/// reader (every scalar as its text, parsed after as every layer is), and its tree for what no
/// fixed list of keys can name (app and topic names) and for the check that every key names a
/// setting.
struct ConfigurationFile {
    let path: String
    /// The top-level mapping: each scalar as its text, maps as `[String: Any]`.
    let document: [String: Any]
    /// Every value, by its key's components (`["apps", "com.example.wallet", "apns", "key_id"]`).
    let provider: InMemoryProvider

    init(path: String) throws {
        self.path = path
        guard FileManager.default.isReadableFile(atPath: path), let contents = FileManager.default.contents(atPath: path) else {
            throw HeraldConfiguration.Invalid("cannot read the configuration file \(path)")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: String(decoding: contents, as: UTF8.self))
        } catch {
            throw HeraldConfiguration.Invalid("the configuration file \(path) is not valid YAML: \(error)")
        }
        // A file of only comments (a template with everything commented out) sets nothing.
        guard let root else {
            (document, provider) = ([:], InMemoryProvider(name: path, values: [:]))
            return
        }
        guard let mapping = root.mapping else {
            throw HeraldConfiguration.Invalid("the configuration file \(path) is not valid YAML: its top level is not a map of settings")
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func tree(_ mapping: Node.Mapping, at prefix: [String]) throws -> [String: Any] {
            var out: [String: Any] = [:]
            for (key, value) in mapping {
                guard let name = key.string else {
                    throw HeraldConfiguration.Invalid("\(path): a key under '\(prefix.joined(separator: "."))' is not text")
                }
                let components = prefix + [name]
                if let nested = value.mapping {
                    out[name] = try tree(nested, at: components)
                } else if value.sequence != nil {
                    // Every setting takes one value (lists are comma-separated text, as in the
                    // environment): a YAML list would otherwise read as unset.
                    throw HeraldConfiguration.Invalid(
                        "\(path): \(components.joined(separator: ".")) is a list; it takes one value (several hosts: one comma-separated text)")
                } else if let scalar = value.scalar {
                    values[AbsoluteConfigKey(components)] = ConfigValue(.string(scalar.string), isSecret: false)
                    out[name] = scalar.string
                }
            }
            return out
        }
        document = try tree(mapping, at: [])
        provider = InMemoryProvider(name: path, values: values)
    }
}
