/// A tiny command-line reader: positional words and `--name value` / `--flag` options.
/// Hand-written because the extension-sized binary should not carry an argument parser.
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    /// Every value of an option given more than once (`--relay a --relay b`), in order.
    var repeated: [String: [String]] = [:]
    var flags: Set<String> = []

    /// Options that take no value.
    static let flagNames: Set<String> = ["verbose", "help", "wake-gateway"]

    init(_ words: [String]) throws(UsageError) {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                positional.append(word)
                continue
            }
            let name = String(word.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                options[String(name[..<equals])] = String(name[name.index(after: equals)...])
                repeated[String(name[..<equals]), default: []].append(String(name[name.index(after: equals)...]))
            } else if Self.flagNames.contains(name) {
                flags.insert(name)
            } else {
                guard index < words.count else { throw UsageError("--\(name) needs a value") }
                options[name] = words[index]
                repeated[name, default: []].append(words[index])
                index += 1
            }
        }
    }

    func option(_ name: String) -> String? { options[name] }

    /// Every value given for `name`.
    func all(_ name: String) -> [String] { repeated[name] ?? [] }

    func seconds(_ name: String) throws(UsageError) -> Duration? {
        guard let text = options[name] else { return nil }
        guard let value = Double(text), value > 0, value < 3600 else { throw UsageError("--\(name) must be a number of seconds") }
        return .milliseconds(Int(value * 1000))
    }

    func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), value >= 0 else { throw UsageError("--\(name) must be a whole number") }
        return value
    }
}

/// A mistake in the command line, shown with the usage.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
