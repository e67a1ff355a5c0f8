import Foundation

/// Which names the configuration knows, so a typo is an error instead of a setting that
/// silently keeps its default: `jobttl: 5` once passed `config check`.
enum SettingNames {
    /// Every key of `file` that names no setting (dotted: `apns.key_idd`), with the nearest
    /// known name when one is close. `apps.<name>.…` take an app's keys.
    static func unknownKeys(in document: [String: Any]) -> [String] {
        let known = Set(HeraldConfiguration.settings.map(\.key))
        var problems: [String] = []
        var settings = document
        // App names hold dots of their own: each app's keys are read under its name.
        if let apps = settings.removeValue(forKey: "apps") as? [String: Any] {
            for (name, entry) in apps.sorted(by: { $0.key < $1.key }) {
                guard let entry = entry as? [String: Any] else { continue }
                for key in leafKeys(entry).sorted() where !ProviderSettings.appKeys.contains(key) {
                    problems.append(
                        describe("apps.\(name).\(key)", nearest: nearest(key, in: ProviderSettings.appKeys).map { "apps.\(name).\($0)" }))
                }
            }
        }
        // Topic names hold dots of their own too.
        if var gateway = settings["wake_gateway"] as? [String: Any], let topics = gateway.removeValue(forKey: "topics") as? [String: Any] {
            settings["wake_gateway"] = gateway.isEmpty ? nil : gateway
            for (name, entry) in topics.sorted(by: { $0.key < $1.key }) {
                guard let entry = entry as? [String: Any] else { continue }
                for key in leafKeys(entry).sorted() where !WakeGatewayFile.topicKeys.contains(key) {
                    problems.append(
                        describe(
                            "wake_gateway.topics.\(name).\(key)",
                            nearest: nearest(key, in: WakeGatewayFile.topicKeys).map { "wake_gateway.topics.\(name).\($0)" }))
                }
            }
        }
        for key in leafKeys(settings).sorted() where !known.contains(key) {
            problems.append(describe(key, nearest: nearest(key, in: Array(known))))
        }
        return problems
    }

    /// `HERALD_*` variables that name no setting: a warning only, as the environment is shared.
    static func unknownVariables(in environment: [String: String]) -> [String] {
        let known = Set(HeraldConfiguration.settings.map(\.environment)).union(["HERALD_CONFIG"])
        return environment.keys.filter { $0.hasPrefix("HERALD_") && !known.contains($0) }.sorted().map { name in
            describe(name, nearest: nearest(name, in: Array(known)))
        }
    }

    /// `'jobttl': no such setting; did you mean 'job_ttl'?` (`what`: an option, for a flag).
    static func describe(_ name: String, nearest: String?, what: String = "setting") -> String {
        "'\(name.prefix(80))': no such \(what)" + (nearest.map { "; did you mean '\($0)'?" } ?? "")
    }

    /// The keys of a nested map, dotted, down to each value that is not a map itself.
    static func leafKeys(_ map: [String: Any], prefix: String = "") -> [String] {
        map.flatMap { key, value -> [String] in
            let name = prefix.isEmpty ? key : "\(prefix).\(key)"
            if let nested = value as? [String: Any], !nested.isEmpty { return leafKeys(nested, prefix: name) }
            return [name]
        }
    }

    /// The candidate within a third of the name's length in edits (at least 2), closest first.
    static func nearest(_ name: String, in candidates: [String]) -> String? {
        let limit = max(2, name.count / 3)
        let scored = candidates.map { ($0, distance(name.lowercased(), $0.lowercased())) }.filter { $0.1 <= limit }
        if let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) { return best.0 }
        // A name missing its unit or a part (`fallback_after` for `fallback_after_secs`): the
        // setting it begins.
        let lowered = name.lowercased()
        guard lowered.count >= 4 else { return nil }
        return candidates.filter { $0.lowercased().hasPrefix(lowered) }.min { $0.count < $1.count || ($0.count == $1.count && $0 < $1) }
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
