/// `herald serve`'s flags, made from ``HeraldConfiguration/settings``: each setting with a flag is
/// `--its-key VALUE` (or `--its-key=VALUE`), its help and default those of the table, none
/// written twice.
public enum SettingFlags {
    /// The flags given, by setting key (a repeated flag: the last); a flag that names no setting,
    /// or has no value, is refused with the nearest name.
    public static func parse(_ arguments: [String]) throws -> [String: String] {
        let byFlag = Dictionary(
            uniqueKeysWithValues: HeraldConfiguration.settings.compactMap { setting in
                setting.flag.map { ($0, setting) }
            })
        var given: [String: String] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let name: String
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }
            // A true-or-false setting may stand alone (`--flag` is true) or be negated (`--no-flag`).
            if value == nil, name.hasPrefix("--no-"), let setting = byFlag["--" + name.dropFirst(5)], setting.isBoolean {
                given[setting.key] = "false"
                continue
            }
            guard name.hasPrefix("--"), let setting = byFlag[name] else {
                throw HeraldConfiguration.Invalid(
                    SettingNames.describe(argument, nearest: SettingNames.nearest(name, in: Array(byFlag.keys)), what: "option"))
            }
            if value == nil, let next = rest.first, !next.hasPrefix("--"),
                !setting.isBoolean || HeraldConfiguration.parseBool(next) != nil
            {
                value = next
                rest = rest.dropFirst()
            }
            if value == nil, setting.isBoolean { value = "true" }
            guard let value else { throw HeraldConfiguration.Invalid("\(name) needs a value") }
            given[setting.key] = value  // the last one wins, as with any command line
        }
        return given
    }

    /// The flags, as `herald serve --help` lists them: flag, help, variable and default.
    public static var help: String {
        HeraldConfiguration.settings.compactMap { setting in
            setting.flag.map { flag in
                "\(flag) <value>: \(setting.help) [\(setting.environment), default \(setting.defaultValue)]"
            }
        }.joined(separator: "\n")
    }
}

extension SettingDescription {
    /// A true-or-false setting: its default is one.
    var isBoolean: Bool { defaultValue == "true" || defaultValue == "false" }
}
